/**
 * `sluice serve` loads the cluster and OAuth modules only when a flag asks for them (src/cli/serve.ts):
 * they were about 50 of the 405 modules it loaded, a tenth of its start-up CPU, which every restarted
 * instance pays before it listens. The modules each start loads are read through module hooks.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sourceModules } from '../helpers/bundle-inputs.js';
import { spawnServe } from '../helpers/spawn-serve.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-modules-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const hooks = fileURLToPath(new URL('../helpers/module-log.js', import.meta.url));

/** The modules of dist/src (as `folder/file.js`) a `sluice serve ARGS` loaded before it listened. */
async function modulesLoaded(name: string, args: string[]): Promise<Set<string>> {
  const log = join(dir, `${name}.txt`);
  const srv = await spawnServe(args, {
    NODE_OPTIONS: `--import ${hooks}`,
    SLUICE_TEST_MODULE_LOG: log,
  });
  await srv.close();
  // The command is a bundle: its entry and chunks stand for the modules they hold (bundle-inputs.ts).
  return sourceModules(readFileSync(log, 'utf8').split('\n'));
}

// The roots of what is loaded on demand: the cluster (its Redis adapter, directory, forwarder, the
// change bus on Redis) and the OAuth resource server (token verification with jose, DPoP, metadata).
// A few small modules of src/cluster (key names, metric names) are the core's and load always.
const CLUSTER = [
  'cluster/cluster.js',
  'cluster/node-redis.js',
  'cluster/shared-link.js',
  'tasks/redis-store.js',
];
const OAUTH = ['auth/resource-server.js', 'auth/jwt-verifier.js', 'auth/dpop-gate.js'];

test('sluice serve without --redis or --oauth-issuer loads no cluster and no OAuth module', async () => {
  const loaded = await modulesLoaded('plain', []);
  // The hooks saw the start (else the absence below would prove nothing).
  for (const m of ['cli/serve.js', 'server/serve.js', 'core/endpoint.js', 'tasks/service.js'])
    assert.ok(loaded.has(m), `${m} loaded`);
  for (const m of [...CLUSTER, ...OAUTH]) assert.equal(loaded.has(m), false, `${m} not loaded`);
});

test('sluice serve --oauth-issuer loads the OAuth modules, still no cluster', async () => {
  const loaded = await modulesLoaded('oauth', ['--oauth-issuer', 'https://as.example.com']);
  for (const m of OAUTH) assert.ok(loaded.has(m), `${m} loaded`);
  for (const m of CLUSTER) assert.equal(loaded.has(m), false, `${m} not loaded`);
});
