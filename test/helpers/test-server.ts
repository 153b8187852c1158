/**
 * The McpServer the server integration tests serve through Sluice. Each tool exercises one transport
 * path; a shared Probe records what the handlers saw (started, finished, aborted) so tests can
 * assert on the server side of an exchange, not just on the bytes that came back.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type CreateServer, type Served, type ServeOptions, serve } from '../../src/server/index.js';
import { serveFetch } from './serve-fetch.js';

export interface Probe {
  /** Tool name → number of calls that began. */
  started: Map<string, number>;
  /** Labels of tool calls that ran to their end (`tool` or `tool:detail`). */
  finished: string[];
  /** Labels of tool calls whose `extra.signal` fired. */
  aborted: string[];
  /** Servers created (one per session, or per request when stateless). */
  servers: number;
  /** Resolves the next time a tool of that name starts. */
  onStart(tool: string): Promise<void>;
  /** Records that a tool started (called by the tools). */
  start(tool: string): void;
}

export function createProbe(): Probe {
  const waiters = new Map<string, (() => void)[]>();
  const probe: Probe = {
    started: new Map(),
    finished: [],
    aborted: [],
    servers: 0,
    onStart(tool) {
      return new Promise((resolve) => {
        const list = waiters.get(tool) ?? [];
        list.push(resolve);
        waiters.set(tool, list);
      });
    },
    start(tool) {
      probe.started.set(tool, (probe.started.get(tool) ?? 0) + 1);
      const list = waiters.get(tool) ?? [];
      waiters.delete(tool);
      for (const w of list) w();
    },
  };
  return probe;
}

function started(probe: Probe, tool: string): void {
  probe.start(tool);
}

/** Sleeps ms, rejecting as soon as signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new Error('aborted'));
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

export function buildTestServer(probe: Probe): McpServer {
  const server = new McpServer(
    { name: 'sluice-test', version: '1.0.0' },
    { capabilities: { logging: {}, resources: { subscribe: true } } },
  );
  probe.servers++;

  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text: t }) => {
    started(probe, 'echo');
    probe.finished.push(`echo:${t}`);
    return text(t);
  });

  // n progress notifications for the request's progressToken, then the result. `pad` makes each
  // notification's message that many characters long (to fill socket buffers quickly).
  server.registerTool(
    'progress',
    { inputSchema: { n: z.number(), delayMs: z.number(), pad: z.number().optional() } },
    async ({ n, delayMs, pad }, extra) => {
      started(probe, 'progress');
      const token = extra._meta?.progressToken;
      const filler = 'x'.repeat(pad ?? 0);
      for (let i = 1; i <= n; i++) {
        if (delayMs > 0) await sleep(delayMs, extra.signal);
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: n, message: `${i}${filler}` },
          });
        }
      }
      probe.finished.push(`progress:${n}`);
      return text(`done ${n}`);
    },
  );

  // n related notifications/message (not coalescible) of `pad` chars each, then the result. With
  // `parallel` they are all sent at once (Promise.all), so backpressure cannot pace the producer.
  server.registerTool(
    'chatter',
    { inputSchema: { n: z.number(), pad: z.number(), parallel: z.boolean().optional() } },
    async ({ n, pad, parallel }, extra) => {
      started(probe, 'chatter');
      const filler = 'y'.repeat(pad);
      const one = (i: number) =>
        extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'info', data: `${i}:${filler}` },
        });
      if (parallel === true) {
        await Promise.all(Array.from({ length: n }, (_, i) => one(i + 1)));
      } else {
        for (let i = 1; i <= n; i++) await one(i);
      }
      probe.finished.push(`chatter:${n}`);
      return text(`chatted ${n}`);
    },
  );

  server.registerTool('slow', { inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
    started(probe, 'slow');
    try {
      await sleep(ms, extra.signal);
    } catch (e) {
      probe.aborted.push(`slow:${ms}`);
      throw e;
    }
    probe.finished.push(`slow:${ms}`);
    return text(`slept ${ms}`);
  });

  server.registerTool(
    'ask',
    { inputSchema: { kind: z.enum(['elicitation', 'sampling']) } },
    async ({ kind }, extra) => {
      started(probe, 'ask');
      if (kind === 'elicitation') {
        const r = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: 'Your name?',
              requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
            },
          },
          ElicitResultSchema,
        );
        probe.finished.push(`ask:${r.action}`);
        return text(`elicited ${r.action} ${JSON.stringify(r.content ?? {})}`);
      }
      const r = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 },
        },
        CreateMessageResultSchema,
      );
      probe.finished.push(`ask:${r.model}`);
      return text(`sampled ${r.model}`);
    },
  );

  // SSE polling (SEP-1699): closes the request's connection early, answers 100 ms later.
  server.registerTool('poll', { inputSchema: {} }, async (_args, extra) => {
    started(probe, 'poll');
    extra.closeSSEStream?.();
    await sleep(100);
    probe.finished.push('poll');
    return text('polled');
  });

  // Messages unrelated to the request: they belong on the standalone GET stream.
  server.registerTool(
    'notify',
    { inputSchema: { n: z.number().optional(), kind: z.enum(['log', 'resource']).optional() } },
    async ({ n, kind }) => {
      started(probe, 'notify');
      const count = n ?? 1;
      for (let i = 1; i <= count; i++) {
        if (kind === 'resource') await server.server.sendResourceUpdated({ uri: `test://r/${i}` });
        else await server.server.sendLoggingMessage({ level: 'info', data: `unrelated ${i}` });
      }
      probe.finished.push(`notify:${count}`);
      return text(`notified ${count}`);
    },
  );

  return server;
}

/** A `createServer` for serve()/createMcpHandler that records into `probe`. */
export function testServerFactory(probe: Probe): CreateServer {
  return () => buildTestServer(probe) as unknown as ReturnType<CreateServer>;
}

export interface Running {
  served: Served;
  url: string;
  port: number;
  probe: Probe;
  stats(): ReturnType<Served['handler']['stats']>;
  close(): Promise<void>;
}

/**
 * Which binding the server suites run against: node:http (default) or, with
 * SLUICE_TEST_BINDING=fetch, createFetchHandler behind a node:http ↔ fetch adapter.
 */
export const TEST_BINDING = process.env['SLUICE_TEST_BINDING'] === 'fetch' ? 'fetch' : 'node';

/** serve() on 127.0.0.1:0 with the test server and the given options. */
export async function startServer(options: Omit<ServeOptions, 'createServer'> = {}): Promise<Running> {
  const probe = createProbe();
  const full = { createServer: testServerFactory(probe), port: 0, host: '127.0.0.1', ...options };
  const served = TEST_BINDING === 'fetch' ? await serveFetch(full) : await serve(full);
  return {
    served,
    url: served.url,
    port: served.port,
    probe,
    stats: () => served.handler.stats(),
    close: async () => {
      await served.close();
    },
  };
}
