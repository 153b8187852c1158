// Cluster overhead, side by side with a single instance, on real `sluice serve` processes:
//   single   - `sluice serve` with no cluster (today's `npm start`)
//   local    - a `sluice serve --redis` member answering its own session (owner-local)
//   forward  - the same session's requests sent to another member, forwarded to the owner
// Echo latency (p50/p99 of sequential keep-alive requests, interleaved in rounds), server CPU per
// request (summed over every instance that touched it, from /proc), and progress events/s of one
// reindex call with the Redis frame copy on vs off.
// `node dist/bench/cluster/forward-latency.js [--n 3000]` (after `npm run build`). JSON on stdout.
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { startRedis } from '../../test/helpers/redis.js';
import { spawnServe } from '../../test/helpers/spawn-serve.js';
import { readCpuMicros } from '../proc.js';

const { values } = parseArgs({ options: { n: { type: 'string' }, events: { type: 'string' } } });
const N = Math.min(20_000, Number(values.n ?? 3_000));
const EVENTS = Math.min(200_000, Number(values.events ?? 50_000));
const ROUND = 250;

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function post(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request(
      {
        hostname: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const BASE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function session(url: string): Promise<Record<string, string>> {
  const init = await post(
    url,
    BASE,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    }),
  );
  const sid = String(init.headers['mcp-session-id']);
  const h = { ...BASE, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  await post(url, h, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return h;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const redis = await startRedis();
const single = await spawnServe(['--keepalive-ms', '0']);
const a = await spawnServe(['--redis', redis.url, '--keepalive-ms', '0']);
const b = await spawnServe(['--redis', redis.url, '--keepalive-ms', '0']);
try {
  const hs = await session(single.url);
  const ha = await session(a.url);
  const cases = [
    { name: 'single', url: single.url, h: hs, pids: [single.child.pid ?? 0] },
    { name: 'local', url: a.url, h: ha, pids: [a.child.pid ?? 0] },
    { name: 'forward', url: b.url, h: ha, pids: [a.child.pid ?? 0, b.child.pid ?? 0] },
  ];
  const lat = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  const cpu = new Map<string, number>(cases.map((c) => [c.name, 0]));
  let id = 1;
  const body = () =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: id++,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'hello' } },
    });
  // Warm up every path.
  for (const c of cases) for (let i = 0; i < 200; i++) await post(c.url, c.h, body());
  for (let done = 0; done < N; done += ROUND) {
    for (const c of cases) {
      const cpu0 = c.pids.reduce((s, p) => s + readCpuMicros(p), 0);
      for (let i = 0; i < ROUND; i++) {
        const t0 = performance.now();
        const r = await post(c.url, c.h, body());
        if (r.status !== 200) throw new Error(`${c.name}: HTTP ${r.status} ${r.text.slice(0, 200)}`);
        lat.get(c.name)?.push(performance.now() - t0);
      }
      cpu.set(c.name, (cpu.get(c.name) ?? 0) + c.pids.reduce((s, p) => s + readCpuMicros(p), 0) - cpu0);
    }
  }
  const echo: Record<string, unknown> = {};
  for (const c of cases) {
    const l = (lat.get(c.name) ?? []).sort((x, y) => x - y);
    echo[c.name] = {
      p50ms: Number(pct(l, 50).toFixed(3)),
      p99ms: Number(pct(l, 99).toFixed(3)),
      cpuMicrosPerRequest: Math.round((cpu.get(c.name) ?? 0) / l.length),
    };
  }
  // Progress events/s: one reindex call streaming EVENTS progress notifications, owner-local.
  const progress: Record<string, number> = {};
  for (const c of [cases[0], cases[1]]) {
    if (c === undefined) continue;
    const t0 = performance.now();
    const r = await post(
      c.url,
      c.h,
      JSON.stringify({
        jsonrpc: '2.0',
        id: id++,
        method: 'tools/call',
        params: {
          name: 'reindex',
          arguments: { corpus: 'b', docs: EVENTS, delayMs: 0 },
          _meta: { progressToken: 'p' },
        },
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    const count = (r.text.match(/notifications\/progress/g) ?? []).length;
    progress[c.name === 'single' ? 'copyOff' : 'copyOn'] = Math.round(count / secs);
  }
  process.stdout.write(
    `${JSON.stringify({ requests: N, echo, progressEventsPerSecond: progress, events: EVENTS }, null, 2)}\n`,
  );
} finally {
  agent.destroy();
  await Promise.all([single.close(), a.close(), b.close()]);
  await redis.stop();
}
