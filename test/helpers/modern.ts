/**
 * Raw 2026-07-28 requests for the modern-era tests: a body with the per-request `_meta` and the
 * standard headers a conforming client mirrors from it (Mcp-Method, Mcp-Name), plus a small server
 * whose tools report what their handlers saw (abort, sends after abort, server-to-client failures).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { encodeHeaderValue } from '../../src/http/param-headers.js';
import type { CreateServer, Served, ServeOptions } from '../../src/server/index.js';
import { serve } from '../../src/server/index.js';
import { ACCEPT_BOTH, type Loose, open, type Reply, type SendOptions, send } from './http.js';

export const MODERN = '2026-07-28';

export function modernMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'modern-test', version: '1.0.0' },
    ...extra,
  };
}

let nextId = 1;
export function modernBody(
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
  id: string | number = nextId++,
): Loose {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta(meta) } };
}

/** The headers a conforming client sends for this body. */
export function modernHeaders(body: Loose, more: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: ACCEPT_BOTH,
    'mcp-protocol-version': String(body.params?._meta?.['io.modelcontextprotocol/protocolVersion'] ?? MODERN),
    'mcp-method': body.method,
  };
  const name = body.params?.name ?? body.params?.uri;
  if (typeof name === 'string' && ['tools/call', 'prompts/get', 'resources/read'].includes(body.method)) {
    h['mcp-name'] = encodeHeaderValue(name);
  }
  const taskId = body.params?.taskId;
  if (typeof taskId === 'string' && ['tasks/get', 'tasks/update', 'tasks/cancel'].includes(body.method)) {
    h['mcp-name'] = encodeHeaderValue(taskId);
  }
  return { ...h, ...more };
}

export function modernSend(url: string, body: Loose, more: Record<string, string> = {}, o: SendOptions = {}) {
  return send(url, { method: 'POST', headers: modernHeaders(body, more), body: JSON.stringify(body), ...o });
}
export function modernOpen(url: string, body: Loose, more: Record<string, string> = {}): Promise<Reply> {
  return open(url, { method: 'POST', headers: modernHeaders(body, more), body: JSON.stringify(body) });
}

export interface ModernProbe {
  aborted: string[];
  /** Sends a handler attempted after its signal aborted. */
  sendsAfterAbort: number;
  servers: number;
  eras: (string | undefined)[];
  askErrors: string[];
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted'));
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(new Error('aborted'));
      },
      { once: true },
    );
  });
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

export function buildModernServer(probe: ModernProbe): McpServer {
  const server = new McpServer(
    { name: 'modern-test-server', version: '2.0.0' },
    {
      capabilities: { logging: {}, tools: { listChanged: true } },
      instructions: 'Test server for 2026-07-28.',
    },
  );
  probe.servers++;
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text: t }) => text(t));
  server.registerTool(
    'region',
    {
      inputSchema: {
        region: z.string().meta({ 'x-mcp-header': 'Region' }),
        count: z.number().int().optional().meta({ 'x-mcp-header': 'Count' }),
      },
    },
    async ({ region }) => text(`in ${region}`),
  );
  // Progress every `everyMs` until n, or until cancelled (then counts any further send attempts).
  server.registerTool(
    'tick',
    { inputSchema: { n: z.number(), everyMs: z.number(), pad: z.number().optional() } },
    async ({ n, everyMs, pad }, extra) => {
      const token = extra._meta?.progressToken;
      const filler = 'p'.repeat(pad ?? 0);
      for (let i = 1; i <= n; i++) {
        try {
          await sleep(everyMs, extra.signal);
        } catch {
          probe.aborted.push('tick');
          await extra
            .sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token ?? 0, progress: i },
            })
            .then(() => probe.sendsAfterAbort++)
            .catch(() => probe.sendsAfterAbort++);
          throw new Error('aborted');
        }
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: n, message: filler },
          });
        }
      }
      return text(`ticked ${n}`);
    },
  );
  server.registerTool('wait', { inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
    try {
      await sleep(ms, extra.signal);
    } catch (e) {
      probe.aborted.push('wait');
      throw e;
    }
    return text(`waited ${ms}`);
  });
  // One log message per level, related to the request.
  server.registerTool('logs', { inputSchema: {} }, async (_a, extra) => {
    for (const level of ['debug', 'info', 'warning', 'error'] as const) {
      await extra.sendNotification({ method: 'notifications/message', params: { level, data: level } });
    }
    return text('logged');
  });
  // n non-coalescible messages of `pad` chars.
  server.registerTool(
    'flood',
    { inputSchema: { n: z.number(), pad: z.number() } },
    async ({ n, pad }, extra) => {
      const filler = 'f'.repeat(pad);
      for (let i = 1; i <= n; i++) {
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'info', data: `${i}:${filler}` },
        });
      }
      return text(`flooded ${n}`);
    },
  );
  server.registerTool('ask', { inputSchema: {} }, async (_a, extra) => {
    try {
      await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: { mode: 'form', message: 'name?', requestedSchema: { type: 'object', properties: {} } },
        },
        ElicitResultSchema,
      );
      return text('answered');
    } catch (e) {
      probe.askErrors.push(e instanceof Error ? e.message : String(e));
      return { ...text('ask failed'), isError: true };
    }
  });
  // Unrelated traffic: a resource update and a tools/list_changed outside any request.
  server.registerTool('unrelated', { inputSchema: {} }, async () => {
    await server.server.sendLoggingMessage({ level: 'error', data: 'unrelated' });
    await server.server.sendResourceUpdated({ uri: 'test://x' });
    return text('done');
  });
  server.registerResource('readme', 'test://readme', {}, async (uri) => ({
    contents: [{ uri: uri.href, text: 'hello' }],
  }));
  return server;
}

export interface RunningModern {
  served: Served;
  url: string;
  port: number;
  probe: ModernProbe;
  close(): Promise<void>;
}

export async function startModernServer(
  options: Omit<ServeOptions, 'createServer'> = {},
): Promise<RunningModern> {
  const probe: ModernProbe = { aborted: [], sendsAfterAbort: 0, servers: 0, eras: [], askErrors: [] };
  const createServer: CreateServer = (ctx) => {
    probe.eras.push(ctx.era);
    return buildModernServer(probe) as unknown as ReturnType<CreateServer>;
  };
  const served = await serve({ createServer, port: 0, host: '127.0.0.1', ...options });
  return {
    served,
    url: served.url,
    port: served.port,
    probe,
    close: () => served.close().then(() => undefined),
  };
}
