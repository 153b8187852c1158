// Section (i) of `npm run bench`: the cost of scale-out on Redis, side by side with a single
// instance, on real `sluice serve` processes and a private redis-server on a free loopback port:
//   single   - `sluice serve` with no cluster (the single-instance baseline, no frame copy)
//   local    - a `sluice serve --redis` member answering its own session (owner-local, copy on)
//   forward  - the same session's requests sent to another member, which forwards them to the owner
//   pipe     - the same session through a byte pipe in a process of its own (pipe-relay.ts): the
//              floor under any relay over loopback TCP, which the forward ratio is read against
//   http     - the same session through the least relay built on `node:http` that reads the request
//              before it forwards (pipe-relay.ts `http`): no routing, no signature; what the
//              forwarded case costs beyond it is Sluice's hop
// Echo latency p50/p99 (sequential keep-alive requests, interleaved in rounds whose order rotates),
// server CPU per request (summed over every instance that touched it, from /proc), progress
// events/s of one `flood` call with the Redis copy on vs off, Redis memory per idle session (INFO
// used_memory delta over N sessions, and MEMORY USAGE of one directory key) and Redis connections
// per instance (sockets of each instance's pid to the Redis port, and CLIENT LIST) with 1 and N
// sessions. Every loop is bounded in count; the whole section takes well under a minute alone.
// Also runnable alone: `node dist/bench/cluster/section.js [--quick]` (JSON on stdout).
import { Agent } from 'node:http';
import { fileURLToPath } from 'node:url';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import { startRedis } from '../../test/helpers/redis.js';
import { type SpawnedServe, spawnServe } from '../../test/helpers/spawn-serve.js';
import { auto, num } from '../format.js';
import { post as httpPost, openSession, type Reply } from '../mcp-http.js';
import { readCpuMicros, socketsTo } from '../proc.js';
import { median } from '../stats.js';
import { startPipe } from './pipe.js';
import { profileRelay, renderRelayProfile } from './relay-profile.js';
import { type ClusterRun, type EchoCase, renderCluster } from './report.js';

// Every request of the section has a deadline; call sites pass the agent first.
const post = (agent: Agent, url: string, headers: Record<string, string>, body: string): Promise<Reply> =>
  httpPost(url, headers, body, { agent, timeoutMs: 30_000 });
const session = (agent: Agent, url: string): Promise<Record<string, string>> =>
  openSession(url, { agent, timeoutMs: 30_000 });

function pct(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export async function runCluster(
  quick: boolean,
  log: (line: string) => void,
  echoOnly = false,
): Promise<ClusterRun> {
  const t0 = performance.now();
  const reps = quick ? 2 : 5;
  const perRep = quick ? 500 : 1_500;
  const round = 250;
  const floodEvents = quick ? 20_000 : 50_000;
  /** Floods per path: a ratio of two medians of a fast, noisy rate needs more than the echo's reps. */
  const floodReps = quick ? 3 : 9;
  const idleSessions = 1_000;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const redis = await startRedis();
  const procs: SpawnedServe[] = [];
  const stops: (() => void)[] = [];
  try {
    const single = await spawnServe(['--keepalive-ms', '0']);
    procs.push(single);
    // The owner opens the idle sessions of the memory figure: lift the per-client initialize rate.
    const a = await spawnServe([
      '--redis',
      redis.url,
      '--keepalive-ms',
      '0',
      '--initialize-rate',
      '1000000',
      '--max-sessions-per-client',
      '5000',
    ]);
    procs.push(a);
    const b = await spawnServe(['--redis', redis.url, '--keepalive-ms', '0']);
    procs.push(b);
    const pid = (s: SpawnedServe): number => s.child.pid ?? 0;
    const pipe = await startPipe(new URL(a.url).port);
    stops.push(() => pipe.kill());
    const bare = await startPipe(new URL(a.url).port, 'http');
    stops.push(() => bare.kill());
    const hs = await session(agent, single.url);
    const ha = await session(agent, a.url);
    const cases = [
      { name: 'single', url: single.url, h: hs, pids: [pid(single)] },
      { name: 'local', url: a.url, h: ha, pids: [pid(a)] },
      { name: 'forward', url: b.url, h: ha, pids: [pid(a), pid(b)] },
      { name: 'pipe', url: pipe.url(a.url), h: ha, pids: [pid(a), pipe.pid] },
      { name: 'http', url: bare.url(a.url), h: ha, pids: [pid(a), bare.pid] },
    ] as const;
    type Name = (typeof cases)[number]['name'];
    const lat: Record<Name, number[]> = { single: [], local: [], forward: [], pipe: [], http: [] };
    const cpuByRep: Record<Name, number[]> = { single: [], local: [], forward: [], pipe: [], http: [] };
    let id = 1;
    const echoBody = (): string =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: id++,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hello' } },
      });
    for (const c of cases) for (let i = 0; i < 300; i++) await post(agent, c.url, c.h, echoBody()); // JIT warm-up
    for (let rep = 0; rep < reps; rep++) {
      const cpu: Record<Name, number> = { single: 0, local: 0, forward: 0, pipe: 0, http: 0 };
      for (let done = 0; done < perRep; done += round) {
        const k = (rep + done / round) % cases.length;
        for (const c of [...cases.slice(k), ...cases.slice(0, k)]) {
          const c0 = c.pids.reduce((s, p) => s + readCpuMicros(p), 0);
          for (let i = 0; i < round; i++) {
            const s = performance.now();
            const r = await post(agent, c.url, c.h, echoBody());
            if (r.status !== 200) throw new Error(`${c.name}: HTTP ${r.status} ${r.text.slice(0, 200)}`);
            lat[c.name].push(performance.now() - s);
          }
          cpu[c.name] += c.pids.reduce((s, p) => s + readCpuMicros(p), 0) - c0;
        }
      }
      for (const c of cases) cpuByRep[c.name].push(cpu[c.name] / perRep);
      log(
        `(i) rep ${rep}: CPU/request single ${auto(cpu.single / perRep)} µs, local ${auto(cpu.local / perRep)} µs, ` +
          `forward ${auto(cpu.forward / perRep)} µs, pipe ${auto(cpu.pipe / perRep)} µs, ` +
          `http relay ${auto(cpu.http / perRep)} µs`,
      );
    }
    const echoCase = (n: Name): EchoCase => {
      const l = [...lat[n]].sort((x, y) => x - y);
      return {
        p50Ms: pct(l, 50),
        p99Ms: pct(l, 99),
        cpuUsPerRequest: median(cpuByRep[n]),
        requests: l.length,
      };
    };
    const echo = {
      single: echoCase('single'),
      local: echoCase('local'),
      forward: echoCase('forward'),
      pipe: echoCase('pipe'),
      http: echoCase('http'),
    };
    const ofLocal = (n: Name): number => median(cpuByRep[n].map((f, i) => f / (cpuByRep.local[i] ?? f)));
    const forwardCpuRatio = ofLocal('forward');
    const pipeCpuRatio = ofLocal('pipe');
    const httpCpuRatio = ofLocal('http');
    const forwardOverHttpRatio = median(cpuByRep.forward.map((f, i) => f / (cpuByRep.http[i] ?? f)));
    log(
      `(i) forwarded/local CPU ratio (median of reps): ${forwardCpuRatio.toFixed(2)}; pipe ${pipeCpuRatio.toFixed(2)}; ` +
        `http relay ${httpCpuRatio.toFixed(2)} (forwarded ÷ it ${forwardOverHttpRatio.toFixed(2)})`,
    );
    const relayProfile = await profileRelay(
      redis.url,
      async (url) => {
        const r = await post(agent, url, ha, echoBody());
        if (r.status !== 200) throw new Error(`profiled relay: HTTP ${r.status} ${r.text.slice(0, 200)}`);
      },
      perRep,
    );
    log(`(i) ${renderRelayProfile(relayProfile)}`);
    if (echoOnly) {
      const none = { events: 0, floods: 0, copyOff: 0, copyOn: 0, forwardedCopyOn: 0 };
      const mem = { sessions: 0, usedMemoryPerSession: 0, directoryKeyBytes: 0 };
      return {
        requestsPerCase: reps * perRep,
        reps,
        echo,
        forwardCpuRatio,
        pipeCpuRatio,
        httpCpuRatio,
        forwardOverHttpRatio,
        relayProfile,
        progress: none,
        memory: mem,
        connections: [],
        redisVersion: '?',
        elapsedMs: performance.now() - t0,
      };
    }

    // Progress events/s: one flood call streaming `floodEvents` progress notifications.
    const flood = async (url: string, h: Record<string, string>): Promise<number> => {
      const s = performance.now();
      const r = await post(
        agent,
        url,
        h,
        JSON.stringify({
          jsonrpc: '2.0',
          id: id++,
          method: 'tools/call',
          params: { name: 'flood', arguments: { count: floodEvents }, _meta: { progressToken: 'p' } },
        }),
      );
      const secs = (performance.now() - s) / 1000;
      const count = (r.text.match(/notifications\/progress/g) ?? []).length;
      if (count !== floodEvents)
        throw new Error(`flood: ${count} of ${floodEvents} events (HTTP ${r.status})`);
      return count / secs;
    };
    const off: number[] = [];
    const on: number[] = [];
    const fwd: number[] = [];
    await flood(single.url, hs);
    await flood(a.url, ha);
    // The order rotates, as the echo rounds' does: a flood right after another one runs on a
    // machine the previous one just left (the load client's collector, the kernel's buffers).
    const floods = [
      { url: single.url, h: hs, out: off },
      { url: a.url, h: ha, out: on },
      { url: b.url, h: ha, out: fwd },
    ];
    for (let rep = 0; rep < floodReps; rep++)
      for (let k = 0; k < floods.length; k++) {
        const f = floods[(rep + k) % floods.length] as (typeof floods)[number];
        f.out.push(await flood(f.url, f.h));
      }
    const progress = {
      events: floodEvents,
      floods: floodReps,
      copyOff: median(off),
      copyOn: median(on),
      forwardedCopyOn: median(fwd),
    };
    log(
      `(i) progress: copy off ${num(progress.copyOff)}/s, copy on ${num(progress.copyOn)}/s, ` +
        `forwarded ${num(progress.forwardedCopyOn)}/s`,
    );

    // Redis: connections with 1 session, memory and connections with `idleSessions` more.
    const link = await connectNodeRedis({ url: redis.url });
    try {
      const send = (args: string[]): Promise<unknown> => link.send(args);
      const used = async (): Promise<number> =>
        Number(/used_memory:(\d+)/.exec(String(await send(['INFO', 'memory'])))?.[1] ?? 0);
      const clientList = async (): Promise<number> =>
        String(await send(['CLIENT', 'LIST']))
          .trim()
          .split('\n').length - 1; // minus this connection
      const perInstance = (): number =>
        Math.max(socketsTo(pid(a), redis.port), socketsTo(pid(b), redis.port));
      const connections = [{ sessions: 1, perInstance: perInstance(), clientList: await clientList() }];
      const before = await used();
      const sids: string[] = [];
      const ag = new Agent({ keepAlive: true, maxSockets: 8 });
      try {
        for (let i = 0; i < idleSessions; i += 50) {
          const batch = await Promise.all(
            Array.from({ length: Math.min(50, idleSessions - i) }, () => session(ag, a.url)),
          );
          for (const h of batch) sids.push(h['mcp-session-id'] ?? '');
        }
      } finally {
        ag.destroy();
      }
      const after = await used();
      connections.push({
        sessions: 1 + idleSessions,
        perInstance: perInstance(),
        clientList: await clientList(),
      });
      let keyBytes = 0;
      const match = String(await send(['KEYS', `*${sids[0] ?? ''}*`]));
      for (const key of match.split(/[\s,]+/).filter((k) => k.length > 0)) {
        keyBytes += Number(await send(['MEMORY', 'USAGE', key, 'SAMPLES', '0']));
      }
      const memory = {
        sessions: idleSessions,
        usedMemoryPerSession: (after - before) / idleSessions,
        directoryKeyBytes: keyBytes,
      };
      const redisVersion = /redis_version:(\S+)/.exec(String(await send(['INFO', 'server'])))?.[1] ?? '?';
      log(
        `(i) Redis: ${auto(memory.usedMemoryPerSession)} B per idle session, ${connections.map((c) => `${c.perInstance} conn/instance at ${c.sessions}`).join(', ')}`,
      );
      return {
        requestsPerCase: reps * perRep,
        reps,
        echo,
        forwardCpuRatio,
        pipeCpuRatio,
        httpCpuRatio,
        forwardOverHttpRatio,
        relayProfile,
        progress,
        memory,
        connections,
        redisVersion,
        elapsedMs: performance.now() - t0,
      };
    } finally {
      await link.close();
    }
  } finally {
    agent.destroy();
    for (const stop of stops) stop();
    await Promise.all(procs.map((p) => p.close()));
    await redis.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const run = await runCluster(
    process.argv.includes('--quick'),
    (l) => process.stderr.write(`${l}\n`),
    process.argv.includes('--echo-only'),
  );
  process.stdout.write(`${JSON.stringify(run, null, 2)}\n${renderCluster(run)}\n`);
}
