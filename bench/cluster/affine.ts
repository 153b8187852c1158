// What owner-affine routing saves (docs/scale-out.md, "Owner-affine routing"): three
// `sluice serve --redis --session-prefix a|b|c` instances behind nginx, once with the document's
// round-robin block and once with its owner-affine block (both read from the document, as the
// tests run them). The same sequential keep-alive echo load through each, interleaved in rounds;
// the CPU of all three instances per request (from /proc; nginx's own is not counted), and the
// share of answers that crossed the hop (`sluice-route: forwarded`). Bounded in count: 9 sessions,
// two warm-up rounds, then 5 rounds of 1,500 echoes per block (quick: 3 of 500). Needs redis-server and nginx.
// `node dist/bench/cluster/affine.js [--quick]` (after `npm run build`); JSON on stdout.
import { Agent } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startDocNginx } from '../../test/helpers/doc-nginx.js';
import { startRedis } from '../../test/helpers/redis.js';
import { type SpawnedServe, spawnServe } from '../../test/helpers/spawn-serve.js';
import { echoBodies, openSession, post } from '../mcp-http.js';
import { readCpuMicros } from '../proc.js';
import { median } from '../stats.js';

const AFFINE = '### Owner-affine routing (optional): no hop for session requests';

export interface AffineRun {
  requestsPerBlock: number;
  /** CPU µs per request, all instances, median over rounds. */
  cpuUs: { roundRobin: number; affine: number };
  /** The same per round, in order. */
  rounds: { roundRobin: number[]; affine: number[] };
  forwardedShare: { roundRobin: number; affine: number };
}

export async function runAffine(quick: boolean): Promise<AffineRun> {
  const rounds = quick ? 3 : 5;
  const perRound = quick ? 500 : 1_500;
  const redis = await startRedis();
  const members: SpawnedServe[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const blocks: Awaited<ReturnType<typeof startDocNginx>>[] = [];
  try {
    for (const p of ['a', 'b', 'c']) {
      members.push(await spawnServe(['--redis', redis.url, '--session-prefix', p, '--keepalive-ms', '0']));
    }
    const ports = members.map((m) => Number(new URL(m.url).port));
    const rr = await startDocNginx(ports);
    blocks.push(rr);
    const affine = await startDocNginx(ports, (b) => b, AFFINE);
    blocks.push(affine);
    const cases = [
      { name: 'roundRobin', url: rr.url },
      { name: 'affine', url: affine.url },
    ] as const;
    const sessions = new Map<string, Record<string, string>[]>();
    for (const c of cases) {
      const list: Record<string, string>[] = [];
      for (let i = 0; i < 9; i++) list.push(await openSession(c.url, { agent, timeoutMs: 10_000 }));
      sessions.set(c.name, list);
    }
    const echo = echoBodies('hi');
    const cpu = (): number => members.reduce((s, m) => s + readCpuMicros(m.child.pid ?? 0), 0);
    const per: Record<string, number[]> = { roundRobin: [], affine: [] };
    const fwd: Record<string, number> = { roundRobin: 0, affine: 0 };
    const one = async (c: (typeof cases)[number], n: number, count: boolean): Promise<void> => {
      const list = sessions.get(c.name) ?? [];
      for (let i = 0; i < n; i++) {
        const r = await post(c.url, list[i % list.length] ?? {}, echo(), { agent, timeoutMs: 10_000 });
        if (r.status !== 200) throw new Error(`${c.name}: HTTP ${r.status} ${r.text.slice(0, 200)}`);
        if (count && r.headers['sluice-route'] === 'forwarded') fwd[c.name] = (fwd[c.name] ?? 0) + 1;
      }
    };
    // JIT warm-up on every path, twice over (a relay's and an owner's code on all three instances).
    for (let w = 0; w < 2; w++) for (const c of cases) await one(c, perRound, false);
    for (let r = 0; r < rounds; r++) {
      for (const c of r % 2 === 0 ? cases : [...cases].reverse()) {
        const c0 = cpu();
        await one(c, perRound, true);
        per[c.name]?.push((cpu() - c0) / perRound);
      }
    }
    const total = rounds * perRound;
    return {
      requestsPerBlock: total,
      cpuUs: { roundRobin: median(per['roundRobin'] ?? []), affine: median(per['affine'] ?? []) },
      rounds: { roundRobin: per['roundRobin'] ?? [], affine: per['affine'] ?? [] },
      forwardedShare: { roundRobin: (fwd['roundRobin'] ?? 0) / total, affine: (fwd['affine'] ?? 0) / total },
    };
  } finally {
    agent.destroy();
    for (const b of blocks) await b.stop();
    await Promise.all(members.map((m) => m.close()));
    await redis.stop();
  }
}

export function renderAffine(r: AffineRun): string {
  const ratio = (a: number, b: number): string => `×${(a / b).toFixed(2)}`;
  const perRound = r.rounds.affine.map((a, i) => ratio(a, r.rounds.roundRobin[i] ?? a)).join(', ');
  return [
    '## (i) Owner-affine routing: nginx round robin vs owner-affine (docs/scale-out.md)',
    '',
    `Three \`sluice serve --redis --session-prefix a|b|c\` behind nginx, each of docs/scale-out.md's two blocks as written; ${r.requestsPerBlock.toLocaleString('en-US')} sequential keep-alive echoes per block over 9 sessions, interleaved rounds after two warm-up rounds. CPU of all three instances per request (nginx's not counted), median over rounds.`,
    '',
    '| block | CPU / request (µs, all instances) | answers forwarded | vs round robin |',
    '|---|---:|---:|---:|',
    `| round robin | ${r.cpuUs.roundRobin.toFixed(0)} | ${(100 * r.forwardedShare.roundRobin).toFixed(0)} % | ×1.00 |`,
    `| owner-affine | ${r.cpuUs.affine.toFixed(0)} | ${(100 * r.forwardedShare.affine).toFixed(0)} % | ${ratio(r.cpuUs.affine, r.cpuUs.roundRobin)} |`,
    '',
    `Per round, owner-affine ÷ round robin: ${perRound}.`,
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = await runAffine(process.argv.includes('--quick'));
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  process.stdout.write(
    `round robin ${r.cpuUs.roundRobin.toFixed(0)} µs/request (${(100 * r.forwardedShare.roundRobin).toFixed(0)} % forwarded), ` +
      `owner-affine ${r.cpuUs.affine.toFixed(0)} µs/request (${(100 * r.forwardedShare.affine).toFixed(0)} % forwarded): ` +
      `×${(r.cpuUs.affine / r.cpuUs.roundRobin).toFixed(2)}\n`,
  );
}
