/**
 * `sluice serve`: the demo MCP server on Streamable HTTP. Prints exactly one line on stdout once it
 * is listening (scripts and tests wait for it); logs go to stderr. SIGINT/SIGTERM close it
 * gracefully: new sessions are refused, requests in flight get --grace-ms to finish.
 */
import { parseArgs } from 'node:util';
import { createDemoServer } from '../demo/demo-server.js';
import type { ResponseMode } from '../server/index.js';
import { jsonLogger, redisCluster, serve, staticBearer } from '../server/index.js';

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
  --redis URL          join a cluster of instances sharing sessions through Redis (or set SLUICE_REDIS_URL);
                       the hop between instances is signed with SLUICE_CLUSTER_SECRET, else a key shared in Redis
  --advertise URL      the URL peers use to reach this instance's endpoint (default: the bound address)
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
      redis: { type: 'string' },
      advertise: { type: 'string' },
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
  const redisUrl = values.redis ?? process.env['SLUICE_REDIS_URL'];
  if (values.advertise !== undefined && (redisUrl === undefined || redisUrl === ''))
    throw new Error('--advertise needs --redis (or SLUICE_REDIS_URL)');
  const cluster =
    redisUrl === undefined || redisUrl === ''
      ? undefined
      : redisCluster({
          url: redisUrl,
          ...(values.advertise === undefined ? {} : { advertise: values.advertise }),
        });
  const served = await serve({
    ...(cluster === undefined ? {} : { cluster }),
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
