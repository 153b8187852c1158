// The child side of a benchmark server process: parses the common flags, starts the server,
// reports its URL, and answers the orchestrator's side-channel requests (CPU, memory, GC, exit)
// over IPC. Each server entry point (raw.ts, sdk.ts, sluice.ts) is one call to runChild().

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { getHeapSpaceStatistics } from 'node:v8';
import { type ChildMessage, isParentMessage, type MemorySnapshot, type ParentMessage } from './ipc.js';

/** Response mode for tools/call: one JSON body, or an SSE stream with the result as its last event. */
export type WireMode = 'json' | 'sse';

export interface ChildArgs {
  mode: WireMode;
  /** Turn the server's metrics on or off (Sluice only; see sluice.ts); undefined keeps its default. */
  metrics: boolean | undefined;
  /** Sluice only: verify JWT bearer tokens (see jwt.ts). */
  jwt: boolean;
  /** Sluice only: tracing through @opentelemetry/api with no provider (`api`) or an SDK provider (`sdk`). */
  tracing: 'api' | 'sdk' | undefined;
  /** Sluice only: `hibernateAfterMs` (ms), for the idle-memory row with hibernation on. */
  hibernate: number | undefined;
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/** How long `exit` waits for the server's close() before exiting anyway. */
const CLOSE_GRACE_MS = 3_000;

function parseChildArgs(argv: string[]): ChildArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      mode: { type: 'string', default: 'sse' },
      metrics: { type: 'string' },
      jwt: { type: 'boolean' },
      tracing: { type: 'string' },
      hibernate: { type: 'string' },
    },
  });
  const mode = values.mode;
  if (mode !== 'json' && mode !== 'sse') throw new Error(`--mode must be json or sse, got ${String(mode)}`);
  const metrics = values.metrics;
  if (metrics !== undefined && metrics !== 'on' && metrics !== 'off') {
    throw new Error(`--metrics must be on or off, got ${metrics}`);
  }
  const tracing = values.tracing;
  if (tracing !== undefined && tracing !== 'api' && tracing !== 'sdk') {
    throw new Error(`--tracing must be api or sdk, got ${tracing}`);
  }
  const hibernate = values.hibernate === undefined ? undefined : Number(values.hibernate);
  if (hibernate !== undefined && !(Number.isSafeInteger(hibernate) && hibernate >= 0)) {
    throw new Error(`--hibernate must be a non-negative number of ms, got ${values.hibernate}`);
  }
  return {
    mode,
    metrics: metrics === undefined ? undefined : metrics === 'on',
    jwt: values.jwt === true,
    tracing,
    hibernate,
  };
}

function send(msg: ChildMessage): void {
  process.send?.(msg);
}

function memory(): MemorySnapshot {
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    young: getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0,
  };
}

function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** `gc()` when the child runs with --expose-gc. */
function forceGc(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return false;
  // Two passes: the first can leave objects whose finalizers free more on the second.
  gc();
  gc();
  return true;
}

async function closeWithin(server: RunningServer | undefined, ms: number): Promise<void> {
  if (server === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([server.close(), grace]);
  } catch (err) {
    process.stderr.write(`bench child: close failed: ${String(err)}\n`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a server child. `start` builds and listens (on 127.0.0.1, port 0); the URL it returns
 * is sent to the orchestrator. The child exits when told to, or when the orchestrator goes
 * away (IPC disconnect), so no server outlives a run. A normal exit also lets `--cpu-prof`
 * write its profile.
 */
export function runChild(start: (args: ChildArgs) => Promise<RunningServer>): void {
  let server: RunningServer | undefined;
  const onMessage = (raw: unknown): void => {
    if (!isParentMessage(raw)) return;
    const msg: ParentMessage = raw;
    if (msg.type === 'exit') {
      void closeWithin(server, CLOSE_GRACE_MS).then(() => process.exit(0));
      return;
    }
    const gc = msg.type === 'gc' ? forceGc() : false;
    send({ type: 'stats', id: msg.id, cpuUs: cpuMicros(), mem: memory(), gc });
  };
  process.on('message', onMessage);
  process.on('disconnect', () => process.exit(0));

  let args: ChildArgs;
  try {
    args = parseChildArgs(process.argv.slice(2));
  } catch (err) {
    send({ type: 'failed', message: String(err) });
    process.exit(2);
  }
  start(args).then(
    (s) => {
      server = s;
      send({ type: 'ready', url: s.url });
    },
    (err: unknown) => {
      send({ type: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      process.exitCode = 1;
      process.disconnect?.();
    },
  );
}

/** Listens on 127.0.0.1 with an ephemeral port; close() also drops keep-alive and stream connections. */
export function listenLocal(server: Server, path: string): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('server has no TCP address'));
        return;
      }
      resolve({
        url: `http://127.0.0.1:${address.port}${path}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** A JSON-RPC error answer with `status` (code -32000, id null). */
export function failJsonRpc(res: ServerResponse, status: number, message: string): void {
  const body = `{"jsonrpc":"2.0","error":{"code":-32000,"message":${JSON.stringify(message)}},"id":null}`;
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

/**
 * Listens on 127.0.0.1 with `handle` for requests to `path` (404 for any other): what a handler
 * throws is logged under `label` and answered 500 if nothing was sent yet.
 */
export function listenHandling(
  label: string,
  path: string,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<RunningServer> {
  const server = createServer((req, res) => {
    if (req.url !== path) {
      failJsonRpc(res, 404, 'Not found');
      return;
    }
    handle(req, res).catch((err: unknown) => {
      process.stderr.write(`${label}: ${String(err)}\n`);
      if (!res.headersSent) failJsonRpc(res, 500, 'Internal error');
    });
  });
  return listenLocal(server, path);
}

/** Reads a request body as UTF-8 text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}
