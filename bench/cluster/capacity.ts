// Per-unit costs of a Sluice cluster on Redis, and a check of the capacity model they make
// (docs/capacity.md), measured in one run on real `sluice serve --redis` processes and a private
// redis-server on loopback:
//   - CPU per echo request, owner-local and forwarded (summed over every instance, from /proc), after
//     a warm-up long enough for the JIT to settle; bytes the instances write per request (/proc/PID/io
//     wchar: the hop's bytes are the forwarded figure minus the owner-local one); Redis commands per
//     request. Redis commands are INFO's total_commands_processed: a script's own calls count too
//     (one EVALSHA appending frames runs 6 more)
//   - per event of a progress stream with the Redis copy: Redis commands, Redis input bytes and
//     owner CPU, for a burst (`flood`) and for events 5 ms apart (`reindex`)
//   - per idle session and per open GET stream: instance RSS, Redis memory, Redis commands
//   - the model check: sessions initialized round robin over N instances, then echo requests round
//     robin (a request lands on its session's owner with probability 1/N); the CPU all instances
//     used, against what the unit costs predict for that forwarded share
// `node dist/bench/cluster/capacity.js [--instances N] [--quick]` (JSON on stdout, progress on stderr).
// Not a test: figures depend on the machine and its load. Every loop is bounded in count.
import { readFileSync } from 'node:fs';
import { Agent, type ClientRequest, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { keys } from '../../src/cluster/keys.js';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import { startRedis } from '../../test/helpers/redis.js';
import { type SpawnedServe, spawnServe } from '../../test/helpers/spawn-serve.js';
import { post as httpPost, openSession, type Reply } from '../mcp-http.js';
import { readCpuMicros, readRssBytes } from '../proc.js';
import { median } from '../stats.js';

export interface EventCosts {
  events: number;
  redisCommands: number;
  redisInBytes: number;
  redisCpuUs: number;
  ownerCpuUs: number;
}

export interface CapacityRun {
  instances: number;
  load: string;
  perRequest: {
    localCpuUs: number;
    forwardCpuUs: number;
    forwardRatio: number;
    localWrittenBytes: number;
    forwardWrittenBytes: number;
    hopBytes: number;
    redisCommandsLocal: number;
    redisCommandsForward: number;
  };
  perEvent: {
    burst: EventCosts;
    paced: EventCosts;
  };
  perSession: {
    sessions: number;
    rssBytes: number;
    redisBytes: number;
    redisCommands: number;
    /** Redis CPU of one housekeeping PEXPIRE, pipelined with the others of its round. */
    redisCpuUsPerTouch: number;
  };
  perStream: { streams: number; rssBytes: number; redisCommands: number };
  model: {
    sessions: number;
    requests: number;
    forwardedShare: number;
    measuredCpuUs: number;
    predictedCpuUs: number;
    ratio: number;
    /** The same rotation with every request sent to its session's owner. */
    affinityCpuUs: number;
    affinityRatio: number;
    redisCpuUs: number;
  };
  elapsedMs: number;
}

const T = 30_000;
const post = (agent: Agent, url: string, h: Record<string, string>, body: string): Promise<Reply> =>
  httpPost(url, h, body, { agent, timeoutMs: T });

/** Bytes this process wrote through write(2)-family calls so far (sockets included). */
function wchar(pid: number): number {
  return Number(/^wchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? Number.NaN);
}

export async function runCapacity(
  o: { instances: number; quick: boolean },
  log: (line: string) => void,
): Promise<CapacityRun> {
  const t0 = performance.now();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const warm = o.quick ? 1_000 : 2_000;
  const reps = o.quick ? 3 : 5;
  const perRep = 400;
  const memSessions = o.quick ? 500 : 2_000;
  // Divisible by every instance count from 2 to 8, so the owner pattern repeats exactly.
  const modelSessions = 840;
  const modelRequests = o.quick ? 1_500 : 4_500;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const redis = await startRedis();
  const link = await connectNodeRedis({ url: redis.url });
  const procs: SpawnedServe[] = [];
  const info = async (): Promise<{ cmds: number; used: number; netIn: number; cpuUs: number }> => {
    const text = String(await link.send(['INFO', 'all']));
    const f = (k: string): number => Number(new RegExp(`^${k}:([\\d.]+)`, 'm').exec(text)?.[1] ?? Number.NaN);
    return {
      // Minus this INFO itself.
      cmds: f('total_commands_processed'),
      used: f('used_memory'),
      netIn: f('total_net_input_bytes'),
      cpuUs: (f('used_cpu_sys') + f('used_cpu_user')) * 1e6,
    };
  };
  try {
    for (let i = 0; i < o.instances; i++) {
      procs.push(
        await spawnServe([
          '--redis',
          redis.url,
          '--keepalive-ms',
          '0',
          '--initialize-rate',
          '1000000',
          '--max-sessions-per-client',
          '100000',
        ]),
      );
    }
    const pids = procs.map((p) => p.child.pid ?? 0);
    const cpuAll = (): number => pids.reduce((s, p) => s + readCpuMicros(p), 0);
    const writtenAll = (): number => pids.reduce((s, p) => s + wchar(p), 0);
    const [a, b] = procs as [SpawnedServe, SpawnedServe];
    const ha = await openSession(a.url, { agent, timeoutMs: T });
    let id = 1;
    const echo = (): string =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: id++,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hello' } },
      });
    const cases = [
      { name: 'local', url: a.url },
      { name: 'forward', url: b.url },
    ] as const;
    for (const c of cases) for (let i = 0; i < warm; i++) await post(agent, c.url, ha, echo());
    const cpu: Record<'local' | 'forward', number[]> = { local: [], forward: [] };
    const wr: Record<'local' | 'forward', number[]> = { local: [], forward: [] };
    const cmds: Record<'local' | 'forward', number[]> = { local: [], forward: [] };
    for (let rep = 0; rep < reps; rep++) {
      for (const c of rep % 2 === 0 ? cases : [...cases].reverse()) {
        const i0 = await info();
        const c0 = cpuAll();
        const w0 = writtenAll();
        for (let i = 0; i < perRep; i++) {
          const r = await post(agent, c.url, ha, echo());
          if (r.status !== 200) throw new Error(`${c.name}: HTTP ${r.status}`);
        }
        cpu[c.name].push((cpuAll() - c0) / perRep);
        wr[c.name].push((writtenAll() - w0) / perRep);
        cmds[c.name].push(((await info()).cmds - i0.cmds - 1) / perRep);
      }
    }
    const localCpuUs = median(cpu.local);
    const forwardCpuUs = median(cpu.forward);
    const perRequest = {
      localCpuUs,
      forwardCpuUs,
      forwardRatio: median(cpu.forward.map((f, i) => f / (cpu.local[i] ?? f))),
      localWrittenBytes: median(wr.local),
      forwardWrittenBytes: median(wr.forward),
      hopBytes: median(wr.forward) - median(wr.local),
      redisCommandsLocal: median(cmds.local),
      redisCommandsForward: median(cmds.forward),
    };
    log(`capacity: per request ${JSON.stringify(perRequest)}`);

    // Per event, with the Redis copy (owner-local).
    const events = async (tool: string, args: Record<string, unknown>, n: number): Promise<EventCosts> => {
      const i0 = await info();
      const c0 = readCpuMicros(pids[0] ?? 0);
      const r = await post(
        agent,
        a.url,
        ha,
        JSON.stringify({
          jsonrpc: '2.0',
          id: id++,
          method: 'tools/call',
          params: { name: tool, arguments: args, _meta: { progressToken: 'p' } },
        }),
      );
      const got = (r.text.match(/notifications\/progress/g) ?? []).length;
      if (got !== n) throw new Error(`${tool}: ${got} of ${n} events (HTTP ${r.status})`);
      await sleep(200); // the last write-behind batch
      const i1 = await info();
      return {
        events: n,
        redisCommands: (i1.cmds - i0.cmds - 1) / n,
        redisInBytes: (i1.netIn - i0.netIn) / n,
        redisCpuUs: (i1.cpuUs - i0.cpuUs) / n,
        ownerCpuUs: (readCpuMicros(pids[0] ?? 0) - c0) / n,
      };
    };
    const burstN = o.quick ? 20_000 : 50_000;
    const burst = await events('flood', { count: burstN }, burstN);
    const paced = await events('reindex', { corpus: 'c', docs: 200, delayMs: 5 }, 200);
    log(`capacity: per event burst ${JSON.stringify(burst)} paced ${JSON.stringify(paced)}`);

    // Per idle session and per open GET stream, on one instance.
    await sleep(500);
    const rss0 = readRssBytes(pids[0] ?? 0);
    const s0 = await info();
    const sids: string[] = [];
    const many = new Agent({ keepAlive: true, maxSockets: 16 });
    for (let i = 0; i < memSessions; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, memSessions - i) }, () =>
          openSession(a.url, { agent: many, timeoutMs: T }),
        ),
      );
      for (const h of batch) sids.push(h['mcp-session-id'] ?? '');
    }
    many.destroy();
    await sleep(1_000);
    const rss1 = readRssBytes(pids[0] ?? 0);
    const s1 = await info();
    const perSession = {
      sessions: memSessions,
      rssBytes: (rss1 - rss0) / memSessions,
      redisBytes: (s1.used - s0.used) / memSessions,
      redisCommands: (s1.cmds - s0.cmds - 1) / memSessions,
      redisCpuUsPerTouch: 0,
    };
    // What housekeeping costs Redis: one PEXPIRE per owned session per period, sent at once.
    const touchRounds = 5;
    const t0r = await info();
    for (let round = 0; round < touchRounds; round++) {
      await Promise.all(sids.map((sid) => link.send(['PEXPIRE', keys.session(sid), '660000'])));
    }
    const t1r = await info();
    perSession.redisCpuUsPerTouch = (t1r.cpuUs - t0r.cpuUs) / (touchRounds * sids.length);
    const streams: ClientRequest[] = [];
    try {
      for (let i = 0; i < sids.length; i += 50) {
        await Promise.all(sids.slice(i, i + 50).map((sid) => openGet(a.url, sid, streams)));
      }
      await sleep(1_000);
      const rss2 = readRssBytes(pids[0] ?? 0);
      const s2 = await info();
      const perStream = {
        streams: sids.length,
        rssBytes: (rss2 - rss1) / sids.length,
        redisCommands: (s2.cmds - t1r.cmds - 1) / sids.length,
      };
      log(`capacity: per session ${JSON.stringify(perSession)} per stream ${JSON.stringify(perStream)}`);
      for (const s of streams) s.destroy();

      // The model check: round robin over every instance, sessions and requests alike.
      const urls = procs.map((p) => p.url);
      const sessions: Record<string, string>[] = [];
      for (let i = 0; i < modelSessions; i++)
        sessions.push(await openSession(urls[i % urls.length] as string, { agent, timeoutMs: T }));
      // Warm-up: every instance in both roles, as long as the unit costs' warm-up per role.
      for (let i = 0; i < warm * urls.length; i++)
        await post(
          agent,
          urls[i % urls.length] as string,
          sessions[Math.floor(i / urls.length) % modelSessions] ?? {},
          echo(),
        );
      const m0 = cpuAll();
      const r0 = await info();
      for (let i = 0; i < modelRequests; i++) {
        // Consecutive requests go to consecutive instances, N in a row for one session: one of the N
        // lands on its owner.
        const r = await post(
          agent,
          urls[i % urls.length] as string,
          sessions[Math.floor(i / urls.length) % modelSessions] ?? {},
          echo(),
        );
        if (r.status !== 200) throw new Error(`model: HTTP ${r.status}`);
      }
      const measuredCpuUs = (cpuAll() - m0) / modelRequests;
      const redisCpuUs = ((await info()).cpuUs - r0.cpuUs) / modelRequests;
      // Session j was initialized on instance j mod N, so it is its owner.
      let forwarded = 0;
      for (let i = 0; i < modelRequests; i++)
        if (i % urls.length !== (Math.floor(i / urls.length) % modelSessions) % urls.length) forwarded++;
      const forwardedShare = forwarded / modelRequests;
      const predictedCpuUs = localCpuUs + forwardedShare * (forwardCpuUs - localCpuUs);
      // The same rotation over instances, each request sent to its session's owner (what a balancer
      // with session affinity does): no hop, so what differs from the owner-local unit cost is the
      // rotation itself (every process wakes for every N-th request, its caches cold).
      const n = urls.length;
      const a0 = cpuAll();
      for (let i = 0; i < modelRequests; i++) {
        const owned = (Math.floor(i / n) * n + (i % n)) % modelSessions;
        const r = await post(agent, urls[i % n] as string, sessions[owned] ?? {}, echo());
        if (r.status !== 200) throw new Error(`affinity: HTTP ${r.status}`);
      }
      const affinityCpuUs = (cpuAll() - a0) / modelRequests;
      const model = {
        sessions: modelSessions,
        requests: modelRequests,
        forwardedShare,
        measuredCpuUs,
        predictedCpuUs,
        ratio: measuredCpuUs / predictedCpuUs,
        affinityCpuUs,
        affinityRatio: affinityCpuUs / localCpuUs,
        redisCpuUs,
      };
      log(`capacity: model ${JSON.stringify(model)}`);
      return {
        instances: o.instances,
        load,
        perRequest,
        perEvent: { burst, paced },
        perSession,
        perStream,
        model,
        elapsedMs: performance.now() - t0,
      };
    } finally {
      for (const s of streams) s.destroy();
    }
  } finally {
    agent.destroy();
    await link.close();
    await Promise.all(procs.map((p) => p.close()));
    await redis.stop();
  }
}

function openGet(url: string, sid: string, into: ClientRequest[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = request(url, {
      method: 'GET',
      agent: false,
      headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
    });
    req.setTimeout(T, () => req.destroy(new Error('GET timeout')));
    req.on('response', (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET ${res.statusCode}`));
      res.on('data', () => undefined);
      res.on('error', () => undefined);
      req.setTimeout(0);
      resolve();
    });
    req.on('error', reject);
    req.end();
    into.push(req);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { instances: { type: 'string', default: '3' }, quick: { type: 'boolean', default: false } },
  });
  const instances = Number(values.instances);
  if (!Number.isInteger(instances) || instances < 2 || instances > 8)
    throw new Error('--instances must be an integer from 2 to 8');
  const run = await runCapacity({ instances, quick: values.quick === true }, (l) =>
    process.stderr.write(`${l}\n`),
  );
  process.stdout.write(`${JSON.stringify(run, null, 2)}\n`);
}
