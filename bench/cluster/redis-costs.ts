// Redis costs of the cluster parts, measured on a private redis-server (no persistence):
//   - memory per idle session (its directory entry; the GET stream is not copied),
//   - memory per replicated event (LIST entry) beyond the frame's own bytes,
//   - replica append throughput (frames/s through the per-tick batched, order-checked script),
//   - connections per instance (one link, whatever the number of sessions).
// `node dist/bench/cluster/redis-costs.js` (after `npm run build`). Figures go to stdout as JSON.
import { Directory, principalHash } from '../../src/cluster/directory.js';
import { keys } from '../../src/cluster/keys.js';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import { EventReplica } from '../../src/cluster/replica.js';
import { startRedis } from '../../test/helpers/redis.js';

const INIT = JSON.stringify({
  protocolVersion: '2025-11-25',
  capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } },
  clientInfo: { name: 'example-client', version: '1.4.2' },
});

function frame(seq: number): string {
  // About the size of a progress notification frame (≈190 B).
  const json = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-42","progress":${seq},"total":100000,"message":"step ${seq} of the long running job"}}`;
  return `id: Tg3x_1_${seq.toString(36)}\ndata: ${json}\n\n`;
}

async function usedMemory(send: (a: string[]) => Promise<unknown>): Promise<number> {
  const info = String(await send(['INFO', 'memory']));
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

const redis = await startRedis();
const link = await connectNodeRedis({ url: redis.url });
const send = (a: string[]) => link.send(a);
try {
  const SESSIONS = 2_000;
  const dir = new Directory(link, 600_000);
  const before = await usedMemory(send);
  const sids: string[] = [];
  for (let i = 0; i < SESSIONS; i++) sids.push(`s${i.toString(36).padStart(8, '0')}${'x'.repeat(24)}`);
  await Promise.all(
    sids.map((sid) =>
      dir.register(sid, {
        owner: 'AbCdEfGhIjKl',
        address: 'http://10.1.2.3:3000/mcp',
        epoch: 1,
        principal: principalHash('user@example.com'),
        tag: 'Tg3x',
        version: '2025-11-25',
        init: INIT,
      }),
    ),
  );
  const after = await usedMemory(send);
  const keyUsage = Number(await send(['MEMORY', 'USAGE', keys.session(sids[0] ?? ''), 'SAMPLES', '0']));

  const FRAMES = 2_000;
  const replica = new EventReplica(link, {
    maxCount: 100_000,
    maxBytes: 64 << 20,
    maxAgeMs: 600_000,
    budgetBytes: 1 << 30,
  });
  let frameBytes = 0;
  for (let s = 1; s <= FRAMES; s++) {
    const f = frame(s);
    frameBytes += f.length;
    replica.append('bench-stream', 1, s, f);
  }
  await replica.flush();
  const listUsage = Number(
    await send(['MEMORY', 'USAGE', keys.streamList('bench-stream', 1), 'SAMPLES', '0']),
  );

  // Throughput: 64 frames per tick on each of 16 streams, for a bounded number of ticks.
  const TICKS = 400;
  const STREAMS = 16;
  const PER = 64;
  const t0 = performance.now();
  const seqs = new Array(STREAMS).fill(0);
  for (let t = 0; t < TICKS; t++) {
    for (let st = 0; st < STREAMS; st++) {
      for (let k = 0; k < PER; k++) {
        seqs[st]++;
        replica.append('bench-tp', st + 1, seqs[st], frame(seqs[st]));
      }
    }
    await replica.flush();
  }
  const seconds = (performance.now() - t0) / 1000;
  const framesTp = (TICKS * STREAMS * PER) / seconds;
  const clients = String(await send(['CLIENT', 'LIST']))
    .trim()
    .split('\n').length;

  process.stdout.write(
    `${JSON.stringify(
      {
        redis: String(await send(['INFO', 'server'])).match(/redis_version:(\S+)/)?.[1],
        idleSession: {
          directoryKeyBytes: keyUsage,
          usedMemoryPerSession: Math.round((after - before) / SESSIONS),
          initParamsBytes: INIT.length,
        },
        perEvent: {
          frameBytes: Math.round(frameBytes / FRAMES),
          listBytesPerEvent: Math.round(listUsage / FRAMES),
          overheadBytes: Math.round((listUsage - frameBytes) / FRAMES),
        },
        replicaThroughput: { framesPerSecond: Math.round(framesTp), batch: PER, streams: STREAMS },
        replicaErrors: replica.stats.errors,
        connectionsPerInstance: clients,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await link.close();
  await redis.stop();
}
