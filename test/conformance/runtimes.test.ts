/**
 * The same server checks on every runtime the fetch binding targets: the fetch binding under Node
 * (through a node:http adapter), Bun (Bun.serve), Deno (Deno.serve) and workerd (a module Worker
 * run by miniflare). Each runtime serves the demo server from test/runtimes/*-serve.mjs and must
 * pass the official conformance active suite plus streaming (progress arrives while the call
 * runs), resume (a cut stream resumed by Last-Event-ID delivers every later event once) and
 * backpressure (a paused reader makes the server coalesce progress instead of queueing it all).
 *
 * The binaries come from the npm registry as devDependencies (bun, deno, miniflare → workerd). A
 * runtime that cannot start here is skipped loudly (named on stderr and in the skip reason); with
 * SLUICE_REQUIRE_RUNTIMES=1 (set by .ci/run) a skip is a failure instead.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { assertActiveSuitePasses, conformanceCli, removeOutDirs } from '../helpers/conformance.js';
import { type Loose, RawSession, toolCall } from '../helpers/http.js';
import { repoRoot, type SpawnedServe, spawnListening } from '../helpers/spawn-serve.js';

interface Runtime {
  name: string;
  /** The binary that must run for this runtime, and how to ask it its version. */
  probe: [string, string[]];
  command(): [string, string[]];
  /** A documented limit of the runtime: the named check runs as a todo (reported, not failing). */
  resumeLimit?: string;
}

const root = repoRoot();
const bin = (name: string): string => join(root, 'node_modules', '.bin', name);
const script = (name: string): string => join(root, 'test', 'runtimes', name);

const RUNTIMES: Runtime[] = [
  {
    name: 'fetch binding on Node',
    probe: [process.execPath, ['--version']],
    command: () => [process.execPath, [script('node-fetch-serve.mjs')]],
  },
  {
    name: 'Bun',
    probe: [bin('bun'), ['--version']],
    command: () => [bin('bun'), [script('bun-serve.mjs')]],
  },
  {
    name: 'Deno',
    probe: [bin('deno'), ['--version']],
    command: () => [
      bin('deno'),
      ['run', '--allow-net=127.0.0.1', '--allow-read', '--allow-env', script('deno-serve.mjs')],
    ],
  },
  {
    name: 'workerd (miniflare)',
    probe: [bin('workerd'), ['--version']],
    command: () => [process.execPath, [script('workerd-serve.mjs')]],
    // Workers isolate I/O per request: events a POST's handler produces cannot be written to the
    // stream of a later GET (a different request), and the POST's own context ends with its
    // client. Resumption needs a Durable Object per session or stateless mode (docs/runtimes.md).
    resumeLimit: 'workerd: a resumed GET cannot carry events produced in the cut POST request context',
  },
];

const REQUIRE = process.env['SLUICE_REQUIRE_RUNTIMES'] === '1';

/** Why the runtime cannot run here, or undefined when it can. */
function unavailable(rt: Runtime): string | undefined {
  const [cmd, args] = rt.probe;
  if (!existsSync(cmd)) return `${cmd} is missing (run 'npm ci')`;
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) return `${cmd} ${args.join(' ')} failed: ${r.error?.message ?? r.stderr.slice(-500)}`;
  return undefined;
}

after(() => removeOutDirs());

for (const rt of RUNTIMES) {
  const missing = unavailable(rt);
  if (missing !== undefined && !REQUIRE) {
    process.stderr.write(`\n*** SKIPPED runtime ${rt.name}: ${missing}\n\n`);
  }
  describe(`runtime: ${rt.name}`, {
    skip: missing !== undefined && !REQUIRE ? `SKIPPED: ${missing}` : false,
  }, () => {
    let served: SpawnedServe | undefined;
    // The server's own temporary directory (TMPDIR), so that what it leaves behind can be seen.
    const scratch = mkdtempSync(join(tmpdir(), 'sluice-runtime-tmp-'));
    const start = async (): Promise<SpawnedServe> => {
      if (missing !== undefined) assert.fail(`${rt.name} cannot run (SLUICE_REQUIRE_RUNTIMES=1): ${missing}`);
      if (served === undefined) {
        const [cmd, args] = rt.command();
        served = await spawnListening(cmd, args, { group: true, startMs: 60_000, env: { TMPDIR: scratch } });
      }
      return served;
    };
    after(async () => {
      await served?.close();
      rmSync(scratch, { recursive: true, force: true });
    });

    test('the conformance active suite passes', async () => {
      conformanceCli();
      await assertActiveSuitePasses(await start());
    });

    test('streaming: progress arrives while the call runs, then the result', async () => {
      const s = new RawSession((await start()).url);
      await s.init();
      const post = await s.postOpen(toolCall('reindex', { corpus: 'c', docs: 20, delayMs: 50 }, 'r1', 'tok'));
      assert.equal(post.status, 200);
      await post.waitFor(
        (r) => r.messages().some((m: Loose) => m.method === 'notifications/progress'),
        10_000,
        'first progress',
      );
      assert.equal(post.ended, false, 'the first progress came before the end of the call');
      await post.finished(15_000, 'the call ends');
      const progress = post
        .messages()
        .filter((m: Loose) => m.method === 'notifications/progress')
        .map((m: Loose) => m.params.progress);
      assert.deepEqual(
        progress,
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.equal(
        post.messages().find((m: Loose) => m.id === 'r1')?.result.content[0].text,
        'reindexed 20 docs',
      );
    });

    test('resume: a stream cut mid-call and resumed with Last-Event-ID delivers every later event once', {
      todo: rt.resumeLimit ?? false,
    }, async () => {
      const s = new RawSession((await start()).url);
      await s.init();
      const n = 30;
      const post = await s.postOpen(toolCall('reindex', { corpus: 'c', docs: n, delayMs: 40 }, 'r2', 'tok2'));
      await post.waitFor((r) => r.messages().length >= 5, 10_000, '5 events');
      post.destroy();
      const before = post.messages();
      const lastId = post.events.at(-1)?.id;
      assert.ok(lastId !== undefined && lastId !== '', 'an event id to resume from');
      const resumed = await s.get({ 'last-event-id': lastId });
      assert.equal(resumed.status, 200);
      await resumed.finished(15_000, 'the resumed stream ends after the result');
      const all: Loose[] = [...before, ...resumed.messages()];
      const progress = all.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress);
      assert.deepEqual(
        progress,
        Array.from({ length: n }, (_, i) => i + 1),
      );
      assert.equal(all.filter((m) => m.id === 'r2').length, 1, 'the result exactly once');
    });

    test('backpressure: a paused reader makes the server coalesce progress; the last value and the result arrive', async () => {
      const s = new RawSession((await start()).url);
      await s.init();
      const count = 20_000;
      const post = await s.postOpen(toolCall('flood', { count, payloadBytes: 512 }, 'f1', 'ftok'), {});
      assert.equal(post.status, 200);
      post.res.pause();
      await new Promise((r) => setTimeout(r, 1_500));
      post.res.resume();
      await post.finished(30_000, 'the flood ends');
      const msgs = post.messages();
      const progress = msgs
        .filter((m: Loose) => m.method === 'notifications/progress')
        .map((m: Loose) => m.params.progress);
      assert.equal(msgs.find((m: Loose) => m.id === 'f1')?.result.content[0].text, `sent ${count}`);
      assert.equal(progress.at(-1), count, 'the latest progress is never dropped');
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i] > progress[i - 1], 'progress in order');
      // ~10 MB of progress against a reader that paused: without backpressure every event would be
      // enqueued (and delivered); with it, queued progress coalesces per token.
      assert.ok(progress.length < count, `expected coalescing, got all ${progress.length} events`);
    });

    test('stopped (SIGTERM), the server leaves nothing in its temporary directory', async () => {
      await (await start()).close();
      // (miniflare's scratch directory was left behind by every workerd run until workerd-run.mjs
      // waited for its removal)
      assert.deepEqual(readdirSync(scratch), []);
    });
  });
}
