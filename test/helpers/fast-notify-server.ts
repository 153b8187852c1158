/**
 * The server of the direct `extra.sendNotification` tests (src/core/sdk/fast-notify.ts): an SDK v1
 * McpServer whose tools record which `sendNotification` they were given and what it did, served by
 * Sluice with the fast dispatch or without it, or with a shape the direct path does not take.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { type Served, type ServeOptions, serve, statelessSafe } from '../../src/server/index.js';

type Send = (n: { method: string; params?: Record<string, unknown> }) => Promise<void>;

/** What the tools saw, per server. */
export interface Seen {
  /** `extra.sendNotification`'s constructor name per call: 'Function' (direct) or 'AsyncFunction' (SDK). */
  kinds: string[];
  /** A tool's `extra.sendNotification`, kept after its request finished. */
  kept: Send | undefined;
  /** What a send after cancellation resolved to ('resolved' or the error). */
  afterCancel: string | undefined;
  /** The error a send without the needed capability rejected with. */
  refused: string | undefined;
  /** Events the flood tool sent so far. */
  produced: number;
  /** The cancel-me tool is waiting for its cancellation. */
  waiting: boolean;
}

function build(seen: Seen, logging: boolean): McpServer {
  const server = new McpServer(
    { name: 'fast-notify-test', version: '1' },
    { capabilities: logging ? { logging: {} } : {} },
  );
  server.registerTool(
    'notes',
    { inputSchema: { n: z.number().int(), text: z.string() } },
    async ({ n, text }, extra) => {
      seen.kinds.push(extra.sendNotification.constructor.name);
      const progressToken = extra._meta?.progressToken ?? 'none';
      for (let i = 1; i <= n; i++) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: i, total: n, message: `${text} ${i} "é" \\ 🚰` },
        });
        if (i === 2 && logging)
          await extra.sendNotification({
            method: 'notifications/message',
            params: { level: 'info', data: text },
          });
      }
      return { content: [{ type: 'text', text: `${text} done` }] };
    },
  );
  // Progress notifications of unusual shapes: each must leave as the SDK's message would.
  server.registerTool('odd', { inputSchema: {} }, async (_args, extra) => {
    seen.kinds.push(extra.sendNotification.constructor.name);
    const progressToken = extra._meta?.progressToken ?? 'none';
    const send = extra.sendNotification as unknown as (n: object) => Promise<void>;
    await send({ params: { progress: 1, progressToken }, method: 'notifications/progress' });
    await send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: 2 } });
    await send({ method: 'notifications/progress', params: { progressToken, progress: 3 }, jsonrpc: 'x' });
    await send({
      method: 'notifications/progress',
      extra: [1, 'two'],
      params: { progressToken, progress: 4 },
    });
    await send({
      method: 'notifications/progress',
      params: { progressToken, progress: 5, toJSON: () => ({ progressToken, progress: 5, via: 'toJSON' }) },
    });
    await send({
      method: 'notifications/progress',
      params: { progressToken, progress: 6 },
      toJSON: () => ({
        method: 'notifications/progress',
        params: { progressToken, progress: 6, whole: true },
      }),
    });
    await send({
      method: 'notifications/progress',
      params: { progressToken, progress: 7, _meta: { 'io.sluice/partial': { seq: 0, n: 1 } }, message: 'p' },
    });
    await send(
      Object.assign(Object.create({ inherited: true }), {
        method: 'notifications/progress',
        params: { progressToken, progress: 8 },
      }),
    );
    // The common shape, written from pieces (core/sdk/progress-json.ts): other key orders, values
    // JSON writes its own way (NaN, -0, 1e21, undefined, a lone surrogate), another token's type.
    await send({
      method: 'notifications/progress',
      params: { total: 1e21, message: '\ud800"\n', progress: 9, progressToken },
    });
    await send({
      method: 'notifications/progress',
      params: { progressToken, progress: Number.NaN, total: undefined, message: '' },
    });
    await send({
      method: 'notifications/progress',
      params: { progressToken: 42, progress: -0, total: Number.POSITIVE_INFINITY },
    });
    return { content: [{ type: 'text', text: 'odd done' }] };
  });
  server.registerTool('keep', { inputSchema: {} }, async (_args, extra) => {
    seen.kinds.push(extra.sendNotification.constructor.name);
    seen.kept = extra.sendNotification as Send;
    return { content: [{ type: 'text', text: 'kept' }] };
  });
  server.registerTool('cancel-me', { inputSchema: {} }, async (_args, extra) => {
    seen.kinds.push(extra.sendNotification.constructor.name);
    seen.waiting = true;
    await new Promise<void>((resolve) =>
      extra.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    try {
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', data: 'late' },
      });
      seen.afterCancel = 'resolved';
    } catch (err) {
      seen.afterCancel = String(err);
    }
    return { content: [{ type: 'text', text: 'never seen' }] };
  });
  server.registerTool('log-without-capability', { inputSchema: {} }, async (_args, extra) => {
    seen.kinds.push(extra.sendNotification.constructor.name);
    try {
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'x' } });
    } catch (err) {
      seen.refused = (err as Error).message;
    }
    return { content: [{ type: 'text', text: 'checked' }] };
  });
  server.registerTool(
    'flood',
    { inputSchema: { n: z.number().int(), kind: z.enum(['progress', 'message']), pad: z.number().int() } },
    async ({ n, kind, pad }, extra) => {
      seen.kinds.push(extra.sendNotification.constructor.name);
      const progressToken = extra._meta?.progressToken ?? 'none';
      const filler = 'x'.repeat(pad);
      for (let i = 1; i <= n && !extra.signal.aborted; i++) {
        seen.produced = i;
        await extra.sendNotification(
          kind === 'progress'
            ? {
                method: 'notifications/progress',
                params: { progressToken, progress: i, total: n, message: filler },
              }
            : { method: 'notifications/message', params: { level: 'info', data: { i, filler } } },
        );
      }
      return { content: [{ type: 'text', text: `flooded ${n}` }] };
    },
  );
  return server;
}

export interface Running {
  srv: Served;
  seen: Seen;
}

export async function start(
  options: Partial<ServeOptions>,
  shape: 'v1' | 'own-notification',
  logging = true,
  shared = false,
) {
  const seen: Seen = {
    kinds: [],
    kept: undefined,
    afterCancel: undefined,
    refused: undefined,
    produced: 0,
    waiting: false,
  };
  const srv = await serve({
    host: '127.0.0.1',
    port: 0,
    mode: 'sse',
    keepaliveMs: 0,
    ...options,
    createServer: (shared ? statelessSafe : <F>(f: F) => f)(() => {
      const s = build(seen, logging);
      // An own `notification` (as a wrapper of the application's would be) is not the shape the
      // direct path relies on: the server keeps the SDK's function.
      if (shape === 'own-notification') {
        const inner = s.server as unknown as { notification: (...a: unknown[]) => Promise<void> };
        const own = inner.notification;
        inner.notification = function (this: unknown, ...a: unknown[]) {
          return own.apply(this, a);
        };
      }
      return s as never;
    }),
  });
  return { srv, seen };
}

/** The SSE body with each session's random tag replaced, so two sessions' ids compare. */
export function normalized(text: string): string {
  return text.replace(/^id: [0-9A-Za-z]{10}\./gm, 'id: TAG.');
}
