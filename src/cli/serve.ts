/**
 * `sluice serve`: the demo MCP server on Streamable HTTP. Prints exactly one line on stdout once it
 * is listening (scripts and tests wait for it): `sluice listening on URL`, and with `--redis`, once
 * it has joined, `sluice listening on URL, joined the cluster as ID (N other instances seen)`;
 * logs go to stderr. SIGINT/SIGTERM close it
 * gracefully: new sessions are refused, requests in flight get --grace-ms to finish.
 */
import { readFileSync } from 'node:fs';
import { createDemoServer } from '../demo/demo-server.js';
import { DEMO_INPUT_FIRST_TOOLS, DEMO_TASK_TOOLS } from '../demo/task-fixtures.js';
import { InvalidOptionError } from '../errors.js';
import type {
  OAuthResourceServer,
  RedisCluster,
  RedisClusterOptions,
  ResponseMode,
} from '../server/index.js';
import { jsonLogger } from '../server/json-logger.js';
import { loadOtelApi } from '../server/otel-load.js';
import { serve } from '../server/serve.js';
import { staticBearer } from '../server/static-bearer.js';
import type { RedisTaskStore } from '../tasks/redis-store.js';
import { createTasks } from '../tasks/service.js';
import { readCommandLine } from './command-line.js';
import { ListenFailure } from './hints.js';
import { SERVE_COMMAND } from './spec/serve.js';
import { oneLine, usageFailure as reportUsage, UsageError } from './usage-error.js';

function int(name: string, v: string | undefined, dflt: number, max = Number.MAX_SAFE_INTEGER): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(n) || n > max)
    throw new UsageError(
      `--${name} must be an integer from 0${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got '${v}'`,
    );
  return n;
}

/** Bad usage: exit 2 with the reason, one line of usage and a hint on stderr (as every sluice command does). */
function usageFailure(error: unknown): number {
  return reportUsage('serve', oneLine(error), SERVE_COMMAND.usageLine);
}

function originOf(v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new UsageError(`--allow-origin expects an origin such as https://app.example.com, got '${v}'`);
  }
  if (u.origin === 'null' || u.origin !== v.replace(/\/$/, ''))
    throw new UsageError(`--allow-origin expects an origin (scheme://host[:port], no path), got '${v}'`);
  return u.origin;
}

/** The names a loopback bind accepts by default (ServerOptions.allowedHosts); --allow-host adds to them. */
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** A Host name as the Host check compares it: lower case, no port (an IPv6 literal keeps its brackets). */
function allowHostName(v: string): string {
  const name = v.trim().toLowerCase();
  if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/.test(name))
    throw new UsageError(
      `--allow-host expects a host name without port or scheme (e.g. mcp.example.com), got '${v}'`,
    );
  return name;
}

/** The one Redis topology the flags name (redisCluster validates the values), or none. */
function redisTopology(
  url: string | undefined,
  sentinel: string | undefined,
  clusterNodes: string | undefined,
): { url: string } | { sentinel: string } | { cluster: string } | undefined {
  const given = [url, sentinel, clusterNodes].filter((v) => v !== undefined);
  if (given.length > 1)
    throw new UsageError('--redis, --redis-sentinel and --redis-cluster exclude each other: give one');
  if (sentinel !== undefined) return { sentinel };
  if (clusterNodes !== undefined) return { cluster: clusterNodes };
  const fromEnv = url ?? process.env['SLUICE_REDIS_URL'];
  return fromEnv === undefined || fromEnv === '' ? undefined : { url: fromEnv };
}

// The cluster and OAuth modules (about 50 of the 405 modules `sluice serve` loaded, a tenth of its
// start-up CPU: docs/benchmarks.md, "CLI start-up") are imported below only when a flag asks for them,
// so a restarted instance listens sooner.

/** redisCluster() validates the values once; its complaint names the flag here. */
async function clusterFromFlags(o: RedisClusterOptions): Promise<RedisCluster> {
  const { redisCluster } = await import('../cluster/cluster.js');
  try {
    return redisCluster(o);
  } catch (error) {
    const m =
      error instanceof InvalidOptionError
        ? /^redisCluster: (url|sentinel|cluster): (.*)$/s.exec(error.message)
        : null;
    if (m === null) throw error;
    const flag = m[1] === 'url' ? '--redis' : `--redis-${m[1]}`;
    throw new UsageError(`${flag}: ${m[2]}`);
  }
}

/** The DPoP nonce key every instance behind one balancer shares (`dpopNonce.key`, 16 bytes or more). */
const NONCE_KEY_ENV = 'SLUICE_DPOP_NONCE_KEY';

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);

/**
 * The resource server for --oauth-*: built once the port is bound, so the resource defaults to the
 * endpoint URL exactly as printed. The options are checked now (a bad issuer is a usage error, exit 2).
 */
async function oauthOption(
  issuer: string | undefined,
  resource: string | undefined,
  scopeList: string | undefined,
  dpopNonce: boolean,
  nonceKey: string | undefined,
): Promise<((endpointUrl: string) => OAuthResourceServer) | undefined> {
  if (issuer === undefined) {
    if (resource !== undefined || scopeList !== undefined || dpopNonce)
      throw new UsageError('--oauth-resource, --oauth-scopes and --oauth-dpop-nonce need --oauth-issuer');
    return undefined;
  }
  // The nonce key instances behind one balancer share when they are no cluster (a cluster's members
  // derive theirs from its secret); from the environment, as a secret should be, not the command line.
  if (nonceKey !== undefined && !dpopNonce)
    throw new UsageError(`${NONCE_KEY_ENV} is set but --oauth-dpop-nonce is not`);
  const scopes = (scopeList ?? '').split(' ').filter((s) => s !== '');
  const { oauthResourceServer } = await import('../auth/resource-server.js');
  const make = (url: string): OAuthResourceServer =>
    oauthResourceServer({
      resource: resource ?? url,
      authorizationServers: [issuer],
      scopes,
      ...(dpopNonce ? { dpopNonce: nonceKey === undefined ? {} : { key: nonceKey } } : {}),
    });
  make(resource ?? 'http://127.0.0.1/mcp');
  return make;
}

export async function main(argv: string[]): Promise<number> {
  try {
    return await run(argv);
  } catch (error) {
    if (error instanceof UsageError || error instanceof InvalidOptionError) return usageFailure(error);
    if (error instanceof ListenFailure) {
      process.stderr.write(`sluice serve: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

async function run(argv: string[]): Promise<number> {
  const line = readCommandLine(SERVE_COMMAND, argv);
  if (typeof line === 'number') return line;
  const { values, positionals } = line;
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument '${positionals[0]}' (serve takes only options)`);
  const mode = (values.mode ?? 'auto') as ResponseMode;
  if (mode !== 'auto' && mode !== 'json' && mode !== 'sse')
    throw new UsageError(`--mode must be auto, json or sse, got '${mode}'`);
  const graceMs = int('grace-ms', values['grace-ms'], 10_000);
  const token = values['auth-token'] ?? process.env['SLUICE_AUTH_TOKEN'];
  if (values.log !== undefined && values.log !== 'json')
    throw new UsageError(`--log takes 'json', got '${values.log}'`);
  const rate = values['initialize-rate'];
  const perSecond = rate === undefined ? undefined : Number(rate);
  if (perSecond !== undefined && !(Number.isFinite(perSecond) && perSecond > 0))
    throw new UsageError(`--initialize-rate must be a positive number, got '${rate}'`);
  const clientLimits = values['no-client-limits']
    ? false
    : {
        ...(values['max-sessions-per-client'] === undefined
          ? {}
          : { maxSessions: int('max-sessions-per-client', values['max-sessions-per-client'], 0) }),
        ...(perSecond === undefined ? {} : { initializePerSecond: perSecond }),
        ...(values['initialize-burst'] === undefined
          ? {}
          : { initializeBurst: int('initialize-burst', values['initialize-burst'], 0) }),
        ...(values['max-concurrent-requests'] === undefined
          ? {}
          : {
              maxConcurrentRequests: int('max-concurrent-requests', values['max-concurrent-requests'], 0),
            }),
      };
  const oauth = await oauthOption(
    values['oauth-issuer'],
    values['oauth-resource'],
    values['oauth-scopes'],
    values['oauth-dpop-nonce'] ?? false,
    nonEmpty(process.env[NONCE_KEY_ENV]),
  );
  if (oauth !== undefined && token !== undefined && token !== '')
    throw new UsageError('--oauth-issuer and --auth-token (or SLUICE_AUTH_TOKEN) exclude each other');
  const origins = (values['allow-origin'] ?? []).map(originOf);
  const hosts = (values['allow-host'] ?? []).map(allowHostName);
  const certFile = values['tls-cert'];
  const keyFile = values['tls-key'];
  if ((certFile === undefined) !== (keyFile === undefined))
    throw new UsageError('--tls-cert and --tls-key go together');
  if (values.http2 && certFile === undefined) throw new UsageError('--http2 needs --tls-cert and --tls-key');
  const tls =
    certFile === undefined || keyFile === undefined
      ? undefined
      : { cert: pemFile('tls-cert', certFile), key: pemFile('tls-key', keyFile) };
  const redis = redisTopology(values.redis, values['redis-sentinel'], values['redis-cluster']);
  if (values.advertise !== undefined && redis === undefined)
    throw new UsageError(
      '--advertise needs --redis, --redis-sentinel or --redis-cluster (or SLUICE_REDIS_URL)',
    );
  const cluster =
    redis === undefined
      ? undefined
      : await clusterFromFlags({
          ...redis,
          ...(values.advertise === undefined ? {} : { advertise: values.advertise }),
        });
  const logger = values.log === 'json' ? jsonLogger() : undefined;
  const taskStore = cluster === undefined ? undefined : await clusterTaskStore(cluster, logger);
  const tasks = createTasks({
    tools: DEMO_TASK_TOOLS,
    inputFirst: DEMO_INPUT_FIRST_TOOLS,
    ...(values['task-lease-ms'] === undefined
      ? {}
      : { leaseMs: int('task-lease-ms', values['task-lease-ms'], 15_000) }),
    ...(values['task-after-ms'] === undefined
      ? {}
      : { taskAfterMs: int('task-after-ms', values['task-after-ms'], 250, 60_000) }),
    ...(logger === undefined ? {} : { logger }),
    // On the cluster's own Redis link (cluster/shared-link.ts): two connections per instance, not
    // four; subscribed to the cancel channel once the cluster has joined (below).
    ...(taskStore === undefined ? {} : { store: taskStore }),
  });
  const api = values.otel ? await loadOtelApi() : undefined;
  if (values.otel && api === undefined)
    throw new UsageError('--otel needs the @opentelemetry/api package installed next to sluice');
  const host = values.host ?? '127.0.0.1';
  const port = int('port', values.port, 3000, 65535);
  const served = await serve({
    ...(api === undefined ? {} : { tracing: { api } }),
    ...(cluster === undefined ? {} : { cluster }),
    ...(tls === undefined ? {} : { tls, http2: values.http2 ?? false }),
    clientLimits,
    ...(values['max-sessions'] === undefined
      ? {}
      : { maxSessions: int('max-sessions', values['max-sessions'], 0) }),
    ...(token === undefined || token === '' ? {} : { authenticate: staticBearer(token) }),
    ...(oauth === undefined ? {} : { oauth }),
    ...(values.metrics ? { metricsPath: '/metrics' } : {}),
    ...(origins.length > 0 ? { allowedOrigins: origins } : {}),
    ...(hosts.length > 0 ? { allowedHosts: [...LOOPBACK_HOSTS, ...hosts] } : {}),
    ...(logger === undefined ? {} : { logger }),
    tasks,
    createServer: () => createDemoServer(),
    host,
    port,
    path: values.path ?? '/mcp',
    mode,
    keepaliveMs: int('keepalive-ms', values['keepalive-ms'], 15_000),
    streamAfterMs: int('stream-after-ms', values['stream-after-ms'], 1000),
    stateless: values.stateless ?? false,
    ...(values['hibernate-after-ms'] === undefined
      ? {}
      : { hibernateAfterMs: int('hibernate-after-ms', values['hibernate-after-ms'], 0) }),
    ...(values['session-prefix'] === undefined ? {} : { sessionIdPrefix: values['session-prefix'] }),
  }).catch((error: unknown) => {
    throw ListenFailure.from(error, host, port, redis !== undefined);
  });
  // Joined by now (serve() resolves after the cluster has): cancels from other instances reach this one.
  await taskStore?.start();
  process.stdout.write(`${await listeningLine(served.url, cluster)}\n`);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`sluice: ${signal}: closing (grace ${graceMs} ms)\n`);
      served
        .close({ graceMs })
        .then(async (report) => {
          await tasks.close();
          return report;
        })
        .then(
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

/** The task store on the cluster's own Redis link (cluster/shared-link.ts). */
async function clusterTaskStore(
  cluster: RedisCluster,
  logger: ReturnType<typeof jsonLogger> | undefined,
): Promise<RedisTaskStore> {
  const [{ RedisTaskStore: Store }, { sharedLinkOf }] = await Promise.all([
    import('../tasks/redis-store.js'),
    import('../cluster/shared-link.js'),
  ]);
  return new Store(sharedLinkOf(cluster), {
    onError: (e) => logger?.warn('tasks.redis_error', { error: String(e) }),
  });
}

/** A PEM file named by a flag; one that cannot be read is bad usage naming the flag, not a bare ENOENT. */
function pemFile(flag: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new UsageError(`--${flag}: cannot read ${file} (${oneLine(error)})`);
  }
}

/**
 * The ready line. A cluster member says that it joined, as which instance, and how many other
 * instances it saw: a member started alone (wrong Redis URL, another Redis database) says 0.
 */
async function listeningLine(url: string, cluster: RedisCluster | undefined): Promise<string> {
  if (cluster === undefined) return `sluice listening on ${url}`;
  const peers = await cluster.peersSeen();
  const seen =
    peers === undefined ? 'other instances unknown' : `${peers} other instance${peers === 1 ? '' : 's'} seen`;
  return `sluice listening on ${url}, joined the cluster as ${cluster.incarnation} (${seen})`;
}
