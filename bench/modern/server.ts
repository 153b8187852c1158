// A benchmark server child for the 2026-07-28 era: `raw` (node:http answering a fixed result),
// `sluice` (createMcpHandler with a v1 McpServer per request, the README's shared validator),
// `sluice-register` (the same, its tool registered with registerTool in the factory, as most servers
// do; its schema built once), `sluice-shared` (the same as `sluice`, declared statelessSafe: one
// server per principal), `sluice-v2` (Sluice hosting the same SDK v2 McpServer per request that
// `sdk2` builds), `sdk2` (the official SDK v2 createMcpHandler, web-standard face bridged to
// node:http), or `bare` and `bare-shared` (the same v1 McpServer as `sluice`, per request or one for
// every request, on the least transport that can host it: bareListener below). It reports its port,
// then answers `cpu`, `mem` and `exit` messages over IPC. `notify N` (Sluice) publishes
// N tool-list changes through handler.notify, for the listen-stream workload.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler as sdk2Handler, McpServer as V2McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { releaseClosed } from '../../src/core/sdk/release.js';
import {
  type CreateServer,
  createMcpHandler,
  registerSharedTools,
  sharedJsonSchemaValidator,
  sharedTool,
  statelessSafe,
} from '../../src/server/index.js';
import { BareTransport, type WriteAnswer } from '../servers/bare-transport.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;
const kind = process.argv[2];
let notify: ((n: number) => void) | undefined;

function rawListener(): Listener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const m = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: number;
        params: { arguments: { text: string } };
      };
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: m.id,
        result: { content: [{ type: 'text', text: m.params.arguments.text }], resultType: 'complete' },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  };
}

/** The `sluice-register` tool's schema, built once (a raw shape would add zod's own per-request cost). */
const ECHO_INPUT = z.object({ text: z.string() });

/** The v1 server `sluice` and `bare` build per request (`sluice-register`: its tool by registerTool). */
function v1Build(register: boolean): () => McpServer {
  // As the README recommends for a server built per session or request: one validator, and the
  // tool's schemas built once (sharedTool), not per server.
  const validator = sharedJsonSchemaValidator();
  const echo = sharedTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return () => {
    const s = new McpServer(
      { name: 'bench', version: '1' },
      { capabilities: { tools: { listChanged: true } }, jsonSchemaValidator: validator },
    );
    if (register)
      s.registerTool('echo', { inputSchema: ECHO_INPUT }, async ({ text }) => ({
        content: [{ type: 'text', text }],
      }));
    else registerSharedTools(s, [echo]);
    return s;
  };
}

/** Writes an answer with the era's `resultType` added (a 2026-07-28 client requires it), one `res.end`. */
const writeModern: WriteAnswer = (res, message) => {
  const answer =
    'result' in message ? { ...message, result: { ...message.result, resultType: 'complete' } } : message;
  const body = JSON.stringify(answer);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

/**
 * The least a transport can do to host an SDK v1 server in the 2026-07-28 era: read and parse the
 * body, hand it to a server on a bare transport. Per request (`shared` false) the server is built,
 * connected, and after its answer closed and released as Sluice releases one (src/core/sdk/release.ts,
 * which spares the collector); `shared`: one server connected once serves every request.
 */
function bareListener(shared: boolean): Listener {
  const build = v1Build(false);
  const one = shared ? new BareTransport(writeModern) : undefined;
  if (one !== undefined) {
    build()
      .connect(one)
      .catch((e: unknown) => process.stderr.write(`bare-shared: connect: ${String(e)}\n`));
  }
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JSONRPCMessage;
      if (one !== undefined) {
        one.receive(message, res);
        return;
      }
      const server = build();
      const failed = (e: unknown): void => {
        process.stderr.write(`bare: ${String(e)}\n`);
        res.destroy();
      };
      const transport = new BareTransport(writeModern, () => {
        server
          .close()
          .then(() => releaseClosed(server))
          .catch(failed);
      });
      server
        .connect(transport)
        .then(() => transport.receive(message, res))
        .catch(failed);
    });
  };
}

function sluiceListener(shared: boolean, register = false): Listener {
  const build = v1Build(register);
  // `sluice-shared`: the same server declared stateless-safe, so one serves every request.
  const h = createMcpHandler({ createServer: shared ? statelessSafe(build) : build });
  notify = (n) => {
    for (let i = 0; i < n; i++) h.notify.toolsListChanged();
  };
  return h;
}

/** Built once, as for the v1 rows: only the server itself is per request. */
const V2_ECHO_INPUT = z.object({ text: z.string() });

/** The SDK v2 server both `sdk2` and `sluice-v2` build per request. */
function v2Server(): V2McpServer {
  const s = new V2McpServer({ name: 'bench', version: '1' });
  s.registerTool('echo', { inputSchema: V2_ECHO_INPUT }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return s;
}

function sluiceV2Listener(): Listener {
  return createMcpHandler({ createServer: v2Server as unknown as CreateServer });
}

function sdk2Listener(): Listener {
  const h = sdk2Handler(v2Server, { legacy: 'reject' });
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method ?? 'POST',
        headers,
        body: Buffer.concat(chunks),
      });
      void h.fetch(request).then(async (r) => {
        const out: Record<string, string> = {};
        r.headers.forEach((v, k) => {
          out[k] = v;
        });
        res.writeHead(r.status, out);
        res.end(Buffer.from(await r.arrayBuffer()));
      });
    });
  };
}

const listener =
  kind === 'raw'
    ? rawListener()
    : kind === 'sluice' || kind === 'sluice-shared' || kind === 'sluice-register'
      ? sluiceListener(kind === 'sluice-shared', kind === 'sluice-register')
      : kind === 'sluice-v2'
        ? sluiceV2Listener()
        : kind === 'bare' || kind === 'bare-shared'
          ? bareListener(kind === 'bare-shared')
          : sdk2Listener();
const srv = createServer(listener).listen(0, '127.0.0.1', () => {
  const a = srv.address();
  process.send?.({ port: typeof a === 'object' && a !== null ? a.port : 0 });
});
process.on('message', (m: unknown) => {
  if (m === 'exit') process.exit(0);
  if (m === 'cpu') {
    const u = process.cpuUsage();
    process.send?.({ cpu: u.user + u.system });
  }
  if (m === 'mem') {
    (globalThis as { gc?: () => void }).gc?.();
    process.send?.({ rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed });
  }
  if (typeof m === 'object' && m !== null && 'notify' in m) {
    notify?.(Number((m as { notify: unknown }).notify));
    process.send?.({ notified: true });
  }
});
