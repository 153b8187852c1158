/**
 * A real HAProxy or Caddy in front of test servers, each from Debian's packages (`.ci/run` installs
 * them): a config written into a fresh temp dir, the daemon started in the foreground listening on a
 * free 127.0.0.1 port, resolved once the port accepts connections, stopped within a deadline. The
 * configs the tests run are docs/deploy.md's and docs/scale-out.md's blocks (read at test time by
 * `docBlock`), with only their addresses pointed at the test's ports.
 *
 * Tests call `skipWithoutHaproxy(t)` / `skipWithoutCaddy(t)` first: without the binary they are
 * skipped loudly, never silently passed.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Daemon, daemonBinary, freePort, spawnDaemon, stopDaemon, waitForPort } from './daemon.js';
import { repoRoot } from './spawn-serve.js';

export const HAPROXY_MISSING = 'SKIPPED: haproxy not installed — .ci/run installs it';
export const CADDY_MISSING = 'SKIPPED: caddy not installed — .ci/run installs it';

const haproxyBinary = daemonBinary('HAPROXY', '/usr/sbin/haproxy', 'haproxy', HAPROXY_MISSING);
const caddyBinary = daemonBinary('CADDY', '/usr/bin/caddy', 'caddy', CADDY_MISSING);

export const findHaproxy = haproxyBinary.find;
export const findCaddy = caddyBinary.find;
export const skipWithoutHaproxy = haproxyBinary.skipWithout;
export const skipWithoutCaddy = caddyBinary.skipWithout;

export type ProxyKind = 'haproxy' | 'caddy';

/**
 * For the tests only, before a Caddyfile's site blocks: Caddy's admin endpoint (a fixed port) and
 * automatic HTTPS off, and every listener on loopback.
 */
export const CADDY_TEST_GLOBALS = '{\n  admin off\n  auto_https off\n  default_bind 127.0.0.1\n}\n';

export interface RunningProxy {
  readonly kind: ProxyKind;
  readonly port: number;
  /** `http://127.0.0.1:PORT/mcp` */
  readonly url: string;
  /** The config the daemon runs. */
  readonly config: string;
  /** What the daemon wrote to stdout and stderr so far (its log), for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * The first ```LANG block under the line `heading` of `docs/FILE`, verbatim: what a reader copies.
 * A change to the document is a change to what the tests run.
 */
export function docBlock(file: string, heading: string, lang: string): string {
  const doc = readFileSync(join(repoRoot(), 'docs', file), 'utf8');
  const section = doc.indexOf(`\n${heading}\n`);
  if (section < 0) throw new Error(`docs/${file} has no "${heading}" section`);
  const open = doc.indexOf(`\`\`\`${lang}\n`, section);
  const close = doc.indexOf('\n```', open + 1);
  if (open < 0 || close < 0) throw new Error(`docs/${file} "${heading}" has no \`\`\`${lang} block`);
  return doc.slice(open + lang.length + 4, close + 1);
}

/**
 * Points the block's `HOST:PORT` addresses (10.x documentation addresses, or `127.0.0.1:3000`) at
 * the test's ports: distinct addresses in order of first appearance get `ports` in order, and the
 * listening address `:8080` becomes 127.0.0.1:`listen`. Nothing else is changed.
 */
export function pointBlock(block: string, ports: readonly number[], listen: number): string {
  const address = /\b(?:10\.\d+\.\d+\.\d+|127\.0\.0\.1):\d+\b/g;
  const seen = [...new Set(block.match(address) ?? [])];
  if (seen.length !== ports.length) {
    throw new Error(`the block names ${seen.length} upstream addresses; the test started ${ports.length}`);
  }
  return block
    .replace(address, (a) => `127.0.0.1:${ports[seen.indexOf(a)]}`)
    .replace(/(^|\s)(?:\*|0\.0\.0\.0)?:8080\b/gm, `$1127.0.0.1:${listen}`)
    .replace(/http:\/\/:8080\b/g, `http://127.0.0.1:${listen}`);
}

/**
 * Starts `kind` with the config `render(port)` gives for its listening port (retried on a new port
 * when another process took it first).
 */
export async function startProxy(kind: ProxyKind, render: (port: number) => string): Promise<RunningProxy> {
  const bin = kind === 'haproxy' ? findHaproxy() : findCaddy();
  if (bin === undefined) throw new Error(kind === 'haproxy' ? HAPROXY_MISSING : CADDY_MISSING);
  const dir = await mkdtemp(join(tmpdir(), `sluice-${kind}-`));
  let lastFailure = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const config = render(port);
    const file = join(dir, kind === 'haproxy' ? 'haproxy.cfg' : 'Caddyfile');
    await writeFile(file, config);
    const args =
      kind === 'haproxy' ? ['-db', '-f', file] : ['run', '--config', file, '--adapter', 'caddyfile'];
    // Caddy keeps its state (certificates, autosave) under XDG dirs: the temp dir, not $HOME.
    const env = kind === 'caddy' ? { XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir, HOME: dir } : undefined;
    const daemon = spawnDaemon(bin, args, ['ignore', 'pipe', 'pipe'], 'SIGKILL', env);
    let log = '';
    const keep = (d: Buffer): void => {
      log = (log + d.toString('utf8')).slice(-32 * 1024);
    };
    daemon.child.stdout?.on('data', keep);
    daemon.child.stderr?.on('data', keep);
    const state = await waitForPort(daemon, port, 10_000);
    if (state === 'ready') return running(kind, port, config, daemon, () => log, dir);
    await stopDaemon(daemon, 'SIGTERM', kind);
    lastFailure = log;
    if (state === 'timeout' || !/address already in use|cannot bind/i.test(log)) break;
  }
  await rm(dir, { recursive: true, force: true });
  throw new Error(`${kind} did not start:\n${lastFailure.trim()}`);
}

function running(
  kind: ProxyKind,
  port: number,
  config: string,
  daemon: Daemon,
  log: () => string,
  dir: string,
): RunningProxy {
  let stopping: Promise<void> | undefined;
  return {
    kind,
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    config,
    log,
    stop() {
      stopping ??= (async () => {
        await stopDaemon(daemon, 'SIGTERM', kind);
        await rm(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
