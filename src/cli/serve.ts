/**
 * `sluice serve`: the demo MCP server on Streamable HTTP. Prints exactly one line on stdout once it
 * is listening (scripts and tests wait for it); logs go to stderr. SIGINT/SIGTERM close it
 * gracefully: new sessions are refused, requests in flight get --grace-ms to finish.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createDemoServer } from '../demo/demo-server.js';
import type { ResponseMode } from '../server/index.js';
import { jsonLogger, serve, staticBearer } from '../server/index.js';

const HELP = `usage: sluice serve [options]

  --host HOST          address to bind (default 127.0.0.1; anything else is reachable from the network)
  --port N             port (default 3000; 0 picks a free one)
  --path PATH          endpoint path (default /mcp)
  --mode MODE          auto | json | sse: how requests are answered (default auto)
  --keepalive-ms N     SSE keepalive comment after N ms of silence (default 15000; 0 = off)
  --stream-after-ms N  in auto mode, switch to SSE after N ms without an answer (default 1000)
  --stateless          no sessions; a fresh server per request; GET and DELETE answer 405
  --grace-ms N         on SIGTERM/SIGINT, let requests in flight finish for up to N ms (default 10000)
  --auth-token TOKEN   require 'Authorization: Bearer TOKEN' (or set SLUICE_AUTH_TOKEN); demo-grade auth
  --metrics            serve Prometheus metrics at /metrics on the same port
  --log json           structured JSON-line logs on stderr (session ids as short hashes, no secrets)
  --tls-cert FILE      serve HTTPS with this PEM certificate (needs --tls-key)
  --tls-key FILE       the PEM private key for --tls-cert
  --http2              with --tls-*: HTTP/2, with HTTP/1.1 fallback negotiated by ALPN
`;

function int(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new Error(`--${name} must be a non-negative integer, got '${v}'`);
  return n;
}

export async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      path: { type: 'string' },
      mode: { type: 'string' },
      'keepalive-ms': { type: 'string' },
      'stream-after-ms': { type: 'string' },
      stateless: { type: 'boolean' },
      'grace-ms': { type: 'string' },
      'auth-token': { type: 'string' },
      metrics: { type: 'boolean' },
      log: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      http2: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const mode = (values.mode ?? 'auto') as ResponseMode;
  if (mode !== 'auto' && mode !== 'json' && mode !== 'sse')
    throw new Error(`--mode must be auto, json or sse, got '${mode}'`);
  const graceMs = int('grace-ms', values['grace-ms'], 10_000);
  const token = values['auth-token'] ?? process.env['SLUICE_AUTH_TOKEN'];
  if (values.log !== undefined && values.log !== 'json')
    throw new Error(`--log takes 'json', got '${values.log}'`);
  const certFile = values['tls-cert'];
  const keyFile = values['tls-key'];
  if ((certFile === undefined) !== (keyFile === undefined))
    throw new Error('--tls-cert and --tls-key go together');
  if (values.http2 && certFile === undefined) throw new Error('--http2 needs --tls-cert and --tls-key');
  const tls =
    certFile === undefined || keyFile === undefined
      ? undefined
      : { cert: readFileSync(certFile), key: readFileSync(keyFile) };
  const served = await serve({
    ...(tls === undefined ? {} : { tls, http2: values.http2 ?? false }),
    ...(token === undefined || token === '' ? {} : { authenticate: staticBearer(token) }),
    ...(values.metrics ? { metricsPath: '/metrics' } : {}),
    ...(values.log === 'json' ? { logger: jsonLogger() } : {}),
    createServer: () => createDemoServer(),
    host: values.host ?? '127.0.0.1',
    port: int('port', values.port, 3000),
    path: values.path ?? '/mcp',
    mode,
    keepaliveMs: int('keepalive-ms', values['keepalive-ms'], 15_000),
    streamAfterMs: int('stream-after-ms', values['stream-after-ms'], 1000),
    stateless: values.stateless ?? false,
  });
  process.stdout.write(`sluice listening on ${served.url}\n`);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`sluice: ${signal}: closing (grace ${graceMs} ms)\n`);
      served.close({ graceMs }).then(
        (report) => {
          process.stderr.write(
            `sluice: closed ${report.sessions} session(s); ${report.cutRequests} request(s) cut at the deadline\n`,
          );
          resolve(0);
        },
        (error: unknown) => {
          process.stderr.write(`sluice: close failed: ${String(error)}\n`);
          resolve(1);
        },
      );
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}
