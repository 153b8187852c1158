/**
 * Which Redis a cluster uses, checked once: one server (`url`), a Sentinel-watched master
 * (`sentinel`: `NAME@HOST:PORT[,HOST:PORT…]`) or a Redis Cluster (`cluster`:
 * `HOST:PORT[,HOST:PORT…]`, any of its nodes; the others are discovered). `sluice serve` parses its
 * `--redis`, `--redis-sentinel` and `--redis-cluster` flags with the same functions, so the CLI and
 * `redisCluster({ … })` accept and refuse exactly the same values.
 */
import { InvalidOptionError } from '../errors.js';

export interface RedisNodeAddress {
  host: string;
  port: number;
}

export type RedisTopology =
  | { kind: 'single'; url: string }
  /** `name` is the master's name in the sentinels' configuration (`sentinel monitor NAME …`). */
  | { kind: 'sentinel'; name: string; sentinels: RedisNodeAddress[] }
  | { kind: 'cluster'; nodes: RedisNodeAddress[] };

/** At most this many seed addresses in one option (a typo pasting a whole file is refused). */
const MAX_SEEDS = 64;
/** A Sentinel master name: what `sentinel monitor` accepts in practice, no separators. */
const MASTER_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** `HOST:PORT`, `[v6]:PORT`; the host a name, IPv4 or bracketed IPv6, the port 1..65535. */
export function parseNodeAddress(what: string, text: string): RedisNodeAddress {
  const t = text.trim();
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/.exec(t);
  const port = Number(m?.[3]);
  if (m === null || !(port >= 1 && port <= 65535)) {
    throw new InvalidOptionError(`${what}: expected HOST:PORT (port 1-65535), got '${text}'`);
  }
  return { host: m[1] ?? m[2] ?? '', port };
}

/** A comma-separated list of HOST:PORT, at least one, no duplicates. */
export function parseNodeList(what: string, text: string): RedisNodeAddress[] {
  const parts = text.split(',');
  if (text.trim() === '' || parts.length > MAX_SEEDS) {
    throw new InvalidOptionError(
      `${what}: expected HOST:PORT[,HOST:PORT…] (1 to ${MAX_SEEDS}), got '${text}'`,
    );
  }
  const nodes = parts.map((p) => parseNodeAddress(what, p));
  const seen = new Set<string>();
  for (const n of nodes) {
    const k = `${n.host}:${n.port}`;
    if (seen.has(k)) throw new InvalidOptionError(`${what}: '${k}' is listed twice`);
    seen.add(k);
  }
  return nodes;
}

/** `NAME@HOST:PORT[,HOST:PORT…]`: the master name and the sentinels to ask for it. */
export function parseSentinelSpec(what: string, text: string): Extract<RedisTopology, { kind: 'sentinel' }> {
  const at = text.indexOf('@');
  const name = at < 0 ? '' : text.slice(0, at);
  if (!MASTER_NAME.test(name)) {
    throw new InvalidOptionError(
      `${what}: expected NAME@HOST:PORT[,HOST:PORT…] (NAME the master's name in the sentinels' configuration), got '${text}'`,
    );
  }
  return { kind: 'sentinel', name, sentinels: parseNodeList(what, text.slice(at + 1)) };
}

function checkUrl(what: string, url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InvalidOptionError(`${what}: expected redis://HOST:PORT or rediss://…, got '${url}'`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw new InvalidOptionError(`${what}: expected a redis:// or rediss:// URL, got '${url}'`);
  }
  return url;
}

/** What `redisCluster({ … })` takes to name its Redis (exactly one of them, or a `link`). */
export interface TopologyOptions {
  url?: string;
  /** `NAME@HOST:PORT[,HOST:PORT…]`, or the parsed form. */
  sentinel?: string | { name: string; sentinels: RedisNodeAddress[] };
  /** `HOST:PORT[,HOST:PORT…]`, or the parsed form. */
  cluster?: string | RedisNodeAddress[];
}

/** The topology the options name, or undefined when none does (a `link` was given). Throws on bad values. */
export function topologyOf(o: TopologyOptions): RedisTopology | undefined {
  if (o.url !== undefined) return { kind: 'single', url: checkUrl('redisCluster: url', o.url) };
  const s = o.sentinel;
  if (s !== undefined) {
    if (typeof s === 'string') return parseSentinelSpec('redisCluster: sentinel', s);
    return parseSentinelSpec(
      'redisCluster: sentinel',
      `${s.name}@${s.sentinels.map((n) => `${bracket(n.host)}:${n.port}`).join(',')}`,
    );
  }
  const c = o.cluster;
  if (c !== undefined) {
    const text = typeof c === 'string' ? c : c.map((n) => `${bracket(n.host)}:${n.port}`).join(',');
    return { kind: 'cluster', nodes: parseNodeList('redisCluster: cluster', text) };
  }
  return undefined;
}

function bracket(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
