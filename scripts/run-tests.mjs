// `npm test`: every compiled test file under dist/test with node's own runner, while the lint runs and
// scripts/install-tools.mjs installs the conformance and interop tools (the files that need them wait
// for it: scripts/tool-files.mjs). The build runs first (npm's pretest). Each test file bounds its own
// waits; the global --test-timeout is a last line of defence so a hang can never stall CI.
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { exitCode } from './exit-code.mjs';
import { toolReader } from './tool-files.mjs';

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const only = process.argv.slice(2);
const LINT = ['node_modules/@biomejs/biome/bin/biome', 'check', 'src', 'test', 'bench', 'scripts'];

/**
 * The compiled test files: `*.test.js` only. Given a directory, node's runner (20.x) also runs every
 * other `.js` file under a `test/` folder — the helpers, each counted as one passing test of its own.
 */
function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.js') ? [join(dir, e.name)] : [],
    )
    .sort();
}

/**
 * The unit tests (dist/test/unit: pure parts, no servers of their own to speak of) run in one process, through a
 * generated entry that imports each file: one process instead of some eighty saves most of their start-up cost
 * (measured alone: 29 s of CPU against 62 s; within a full run, 37 s against 46 s). The same tests
 * pass either way; a file named on the command line (`npm test -- dist/test/unit/x.test.js`) runs alone.
 *
 * The integration and cluster files share processes the same way, in two generated entries run side by
 * side, except those named in OWN_PROCESS below. A file alone pays about a CPU-second before its first
 * test (node, its test runner, the SDK, Sluice and zod loaded and warmed); 84 files that mostly start a
 * server on port 0 and talk to it spent 164 CPU-s alone and 51 CPU-s in two shared processes (measured
 * 2026-12-06, each file passing the same either way). A shared file's top-level before/after hooks run
 * once for the whole entry, before its first test and after its last, which is harmless for servers on
 * port 0 and fatal for the kinds of file listed.
 */
const OWN_PROCESS = [
  // Global state a shared process would leak into other files: OpenTelemetry's global providers,
  // top-level beforeEach/afterEach hooks (they would wrap every test of the entry), process handlers.
  'integration/tracing-client',
  'integration/tracing-server',
  'integration/tracing-tasks',
  'cluster/tracing-cluster',
  'cluster/tracing-task-cluster',
  'integration/client-auth',
  'integration/partial-cancel',
  'cluster/task-stores',
  // Files that spawn many processes or run long (8–130 CPU-s, or 10 s and more of waiting on their
  // children): alone they run beside other files in the runner's slots; in an entry, one after another.
  'cluster/cluster-nginx',
  'cluster/endpoint-fuzz-cluster',
  'cluster/failures',
  'cluster/forwarding',
  'cluster/owner-affine',
  'cluster/redis-ha',
  'cluster/task-faults',
  'cluster/task-lifecycle-model',
  'cluster/task-nginx-faults',
  'cluster/topology-options',
  'integration/cli-habits',
  'integration/cli-serve',
  'integration/cli-serve-oauth',
  'integration/cli-task',
  'integration/client-cli',
  'integration/client-runtimes-cut',
  'integration/doctor-cli',
  'integration/endpoint-fuzz',
  'integration/fetch-binding-core',
  'integration/fetch-binding-flow',
  'integration/fetch-binding-hostile',
  'integration/hibernation-trials',
  'integration/hostile-input',
  'integration/install-today',
  'integration/json-mode-order',
  'integration/long-generation-cuts',
  'integration/observability-prometheus',
  'integration/package-install',
  'integration/partial-backpressure',
  'integration/promotion',
  'integration/readme-snippets',
  'integration/server-flow',
  'integration/top-cli',
].map((name) => join('dist', 'test', `${name}.test.js`));

const UNITS = join('dist', 'test', 'units.test.js');
const SHARED = [join('dist', 'test', '0-shared-1.test.js'), join('dist', 'test', '0-shared-2.test.js')];

/**
 * The main runner's files that take longest, longest first (wall seconds in a full run of 2026-12-07 in
 * brackets): they start first, and the many short files fill the slots around them and at the end.
 * Node's runner starts files in the order of their sorted paths, whatever order they are given in, so
 * each file of the main runner is started through a generated one-line entry whose name sorts in this
 * order (ORDERED below): still one file per process. In path order the units entry (36 s of one core)
 * and the README snippets came last and ran with a core idle: that run's main runner took 530 s while
 * its files' CPU, spread on two cores, needed some 480 s.
 */
const LONGEST_FIRST = [
  'cluster/cluster-nginx', // 175
  '0-shared-2', // 122
  '0-shared-1', // 96
  'conformance/client-suite', // 86
  'cluster/failures', // 76
  'conformance/inspector-web', // 69
  'integration/long-generation-cuts', // 55
  'integration/readme-snippets', // 46
  'conformance/runtimes', // 45
  'integration/fetch-binding-flow', // 44
  'integration/cli-habits', // 43
  'cluster/task-nginx-faults', // 43
  'integration/package-install', // 41
  'conformance/inspector', // 41
  'cluster/redis-ha', // 39
  'units', // 36
  'integration/partial-backpressure', // 32
  'integration/fetch-binding-hostile', // 31
  'integration/promotion', // 30
  'integration/cli-serve', // 30
].map((name) => join('dist', 'test', `${name}.test.js`));
const ORDERED = join('dist', 'test', '0-ordered');
const SIDE_ORDERED = join('dist', 'test', '0-side');
/** What this script writes under dist/test (an earlier run's copies are not test files of their own). */
const GENERATED = [UNITS, ...SHARED];
const isGenerated = (f) =>
  GENERATED.includes(f) || f.startsWith(`${ORDERED}/`) || f.startsWith(`${SIDE_ORDERED}/`);
/** Files that need tools/ (scripts/tool-files.mjs): each in a process of its own, started once the installs end. */
const needsTools = toolReader();
const TOOLS_READY = pathToFileURL(fileURLToPath(new URL('tools-ready.mjs', import.meta.url))).href;

/**
 * Writes a generated entry that imports `files` (paths under dist/test) into one process. A file that
 * needs tools/ is imported only once scripts/tools-ready.mjs says the installs ended: a dynamic
 * import after the wait, as a static one would be evaluated before it.
 */
function entry(path, what, files) {
  const gated = files.length === 1 && needsTools(files[0]);
  const imports = files.map((f) =>
    gated
      ? `await toolsReady('${relative('.', f)}');\nawait import('${relativeImport(dirname(path), f)}');`
      : `import '${relativeImport(dirname(path), f)}';`,
  );
  if (gated) imports.unshift(`import { toolsReady } from '${TOOLS_READY}';`);
  writeFileSync(
    path,
    `// Generated by scripts/run-tests.mjs: ${what}, in one process.\n${imports.join('\n')}\n`,
  );
}

/** `real` (the test files, no generated entry) with the unit and the shareable files replaced by their entries. */
function grouped(real, waiting) {
  const under = (dir) => real.filter((f) => f.startsWith(`${join('dist', 'test', dir)}/`));
  const units = under('unit').filter((f) => !needsTools(f));
  const shared = [...under('integration'), ...under('cluster')].filter(
    (f) => !OWN_PROCESS.includes(f) && !waiting.includes(f) && !needsTools(f),
  );
  entry(UNITS, 'every unit test file', units);
  // Alternating, so each entry gets a like mix of the two folders (each about 50 s alone).
  for (const [i, path] of SHARED.entries()) {
    const mine = shared.filter((_, k) => k % SHARED.length === i);
    entry(path, 'integration and cluster files that need no process of their own', mine);
  }
  const rest = real.filter((f) => !units.includes(f) && !shared.includes(f));
  return [...SHARED, ...rest, UNITS];
}

/**
 * `main` (the main runner's files) as generated one-file entries whose sorted names follow
 * LONGEST_FIRST, except that the first three (the runner's first slots) need no tools: a file
 * waiting for the installs would hold a slot idle.
 */
function ordered(main) {
  const rank = (f) => (LONGEST_FIRST.includes(f) ? LONGEST_FIRST.indexOf(f) : LONGEST_FIRST.length);
  const sorted = [...main].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const first = sorted.filter((f) => !needsTools(f)).slice(0, 3);
  return entries(ORDERED, [...first, ...sorted.filter((f) => !first.includes(f))]);
}

/** `files` as one-file entries in `dir` whose names sort in the order given. */
function entries(dir, files) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  return files.map((f, i) => {
    const name = relative(join('dist', 'test'), f).replaceAll('/', '--');
    const path = join(dir, `${String(i).padStart(3, '0')}-${name}`);
    entry(path, relative(join('dist', 'test'), f), [f]);
    return path;
  });
}

/** An import specifier for `file` from a module in `dir`. */
function relativeImport(dir, file) {
  const r = relative(dir, file);
  return r.startsWith('.') ? r : `./${r}`;
}

/**
 * Files that mostly wait (the conformance suite's scenarios, a 60 s call across token expiry, the
 * doctor's idle and clump checks through real proxies, a documented cluster's lease running out):
 * measured in a full run at 0.07–0.3 of a core each for 6–80 s. In the main runner each
 * held one of its three slots while using almost no CPU; they run instead, two at a time, in a second
 * runner beside it, so the slots go to files that compute. Their output is printed after the main
 * runner's, with its own summary; either runner failing fails `npm test`.
 */
const WAITING = [
  'conformance/server-suite',
  'conformance/tasks-suite',
  'cluster/doc-recipe',
  'integration/oauth-e2e-tokens',
  'integration/doctor',
  'integration/proxies',
  'integration/proxies-conformance',
  'integration/nginx-proxy',
  'integration/client-sdk-server',
  'integration/server-session',
  'integration/tracing-stream',
  'integration/server-ops',
  'integration/task-listed-policy',
  'integration/partial-cuts',
  'integration/hibernation',
  // Not a waiting file: about 16 CPU-s in children of its own Node lines, one at a time, over its
  // 15 s. Here because this runner usually ends before the main one (2026-12-06: 411 s against 482 s).
  'conformance/node-lines',
  // Waits out owners' leases (a frozen owner, a stalled Redis): 10 s of wall for under 1 s of CPU,
  // which in a shared entry of the main runner lay on its critical path.
  'cluster/hop-replay',
  // Wait for instances to stop passing after each failover (10 s each, 1–3 CPU-s): in a shared
  // entry they lay on the main runner's critical path.
  'cluster/task-rewrite',
  'cluster/task-rewrite-random',
].map((name) => join('dist', 'test', `${name}.test.js`));

const FLAGS = [
  // Memory assertions (no growth after hostile input, bounded caches) call gc() first.
  '--expose-gc',
  // Passed on to every test file's process (the runner forwards its execArgv), not to the servers and
  // tools the files start. V8's parallel and concurrent GC helpers buy nothing where two cores are
  // already shared by four test files and their children, and they cost: the units entry took 44 CPU-s
  // and 38 s with them, 32 CPU-s and 31 s without (2026-12-07). The collector's results are the same.
  '--single-threaded-gc',
  // node:test without its process-wide async hook (the file says why and what that changes).
  '--require',
  fileURLToPath(new URL('test-preload.cjs', import.meta.url)),
  '--test',
  '--test-reporter=spec',
  '--test-timeout=420000',
];
// Three files at once on a 2-core machine: most files wait on child processes and sockets more than
// they compute (measured: 8.4 min against 9.8 min with two; four was slower again, 610 s against 578 s).
const MAIN = ['--test-concurrency=3'];
// Two at once in the side runner: its files wait far more than they compute. One at a time, it took
// 550 s against the main runner's 546 s; two at a time, 281 s, and the main runner took no longer
// (2026-12-07, full local runs). The machine is then busy throughout (vmstat: 0–3 % idle): what
// a run costs is its CPU, some 1,000–1,100 CPU-s, and moving files between the runners changes
// nothing (four of the main runner's moved here: 562 s against 550 s).
const SIDE = ['--test-concurrency=2'];

// Tests reach only loopback. Tools that look for their own updates on start would not: Deno (dl.deno.land,
// seen in a packet capture of a run) and npm. Set for the whole run, so every file and what it starts inherit it.
process.env.DENO_NO_UPDATE_CHECK = '1';
process.env.npm_config_update_notifier = 'false';

if (only.length > 0) {
  // Files named on the command line: the tools first (a no-op once installed from their lockfiles).
  run(process.execPath, ['scripts/install-tools.mjs']);
  run(process.execPath, LINT);
  run(process.execPath, [...FLAGS, ...MAIN, ...only]);
} else {
  const found = testFiles('dist/test').filter((f) => !isGenerated(f));
  const missing = [...WAITING, ...OWN_PROCESS, ...LONGEST_FIRST].filter(
    (f) => !found.includes(f) && !GENERATED.includes(f),
  );
  if (missing.length > 0)
    throw new Error(`scripts/run-tests.mjs names test files that do not exist: ${missing.join(', ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'sluice-tests-'));
  // The tool installs mostly wait on the registry (about 40 s on a fresh clone, when the build takes
  // 8): they run beside the lint and the first test files, and the files that need them wait for the
  // exit code this writes (scripts/tools-ready.mjs). Their output is shown when they fail.
  const done = join(dir, 'tools.done');
  const toolsLog = join(dir, 'tools.log');
  const toolsOut = openSync(toolsLog, 'w');
  process.env.SLUICE_TOOLS_DONE = done;
  const since = Date.now();
  const tools = exitCode(process.execPath, ['scripts/install-tools.mjs'], {
    stdio: ['ignore', toolsOut, toolsOut],
  }).then((status) => {
    writeFileSync(`${done}.tmp`, String(status));
    renameSync(`${done}.tmp`, done);
    const took = Math.round((Date.now() - since) / 1000);
    process.stdout.write(
      `\n── tool installs ${status === 0 ? 'done' : `FAILED (exit ${status})`} after ${took} s: the files that need them start now ──\n`,
    );
    return status;
  });
  // The lint beside them too: alone it takes 2 s, but 11 s beside the installs, before the first test
  // (CI, 2026-12-07). What it finds is printed as it finds it and fails the run at its end.
  const lint = exitCode(process.execPath, LINT, { stdio: 'inherit' });
  const all = grouped(found, WAITING);
  // The side runner's files in path order, those that need the tools last.
  const side = entries(SIDE_ORDERED, [
    ...WAITING.filter((f) => !needsTools(f)).sort(),
    ...WAITING.filter((f) => needsTools(f)).sort(),
  ]);
  const report = join(dir, 'waiting.txt');
  const stderrFile = join(dir, 'waiting.stderr.txt');
  const errors = openSync(stderrFile, 'w');
  let code = 0;
  try {
    const [main, waiting, installed, linted] = await Promise.all([
      exitCode(process.execPath, [...FLAGS, ...MAIN, ...ordered(all.filter((f) => !WAITING.includes(f)))], {
        stdio: 'inherit',
      }),
      // Its report and whatever its files print go to files, shown whole after the main runner's.
      exitCode(process.execPath, [...FLAGS, ...SIDE, `--test-reporter-destination=${report}`, ...side], {
        stdio: ['ignore', 'ignore', errors],
      }),
      tools,
      lint,
    ]);
    process.stdout.write('\n── the waiting files (run beside the others, two at a time) ──\n');
    process.stdout.write(readFileSync(stderrFile, 'utf8'));
    process.stdout.write(existsSync(report) ? readFileSync(report, 'utf8') : 'no report was written\n');
    if (installed !== 0) {
      process.stdout.write('\n── the tool installs (scripts/install-tools.mjs) failed; their output ──\n');
      process.stdout.write(readFileSync(toolsLog, 'utf8'));
    }
    if (linted !== 0) process.stdout.write('\n── the lint (biome check) failed: its findings are above ──\n');
    code = [linted, main, waiting, installed].find((c) => c !== 0) ?? 0;
  } finally {
    closeSync(errors);
    closeSync(toolsOut);
    rmSync(dir, { recursive: true, force: true });
  }
  process.exitCode = code;
}
