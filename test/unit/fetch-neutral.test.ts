/**
 * `sluice/fetch` must load where node:* does not exist (Cloudflare Workers without nodejs_compat,
 * browsers, Deno user code): bundle its whole module graph, dependencies included, with esbuild for
 * the neutral platform, where any node:* import or Node builtin is an unresolvable error. The same
 * build of `sluice/server` must fail, which proves the check can fail.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { build } from 'esbuild';
import { repoRoot } from '../helpers/spawn-serve.js';

async function neutralBuild(entry: string): Promise<{ inputs: string[]; errors: string[] }> {
  try {
    const r = await build({
      entryPoints: [join(repoRoot(), entry)],
      bundle: true,
      write: false,
      platform: 'neutral',
      format: 'esm',
      mainFields: ['module', 'main'],
      metafile: true,
      logLevel: 'silent',
    });
    return { inputs: Object.keys(r.metafile.inputs), errors: [] };
  } catch (e) {
    const errors = (e as { errors?: { text: string }[] }).errors ?? [{ text: String(e) }];
    return { inputs: [], errors: errors.map((x) => x.text) };
  }
}

test('nothing reachable from sluice/fetch imports node:* (neutral-platform bundle succeeds)', async () => {
  const r = await neutralBuild('dist/src/fetch/index.js');
  assert.deepEqual(r.errors, []);
  assert.ok(
    r.inputs.some((i) => i.endsWith('dist/src/core/pipeline/pipeline.js')),
    'the pipeline is in the graph',
  );
  assert.ok(
    r.inputs.some((i) => i.endsWith('dist/src/fetch/stream-sink.js')),
    'the stream sink is in the graph',
  );
  assert.deepEqual(
    r.inputs.filter((i) => i.startsWith('node:')),
    [],
  );
});

test('the same check refuses sluice/server, which does import node:http', async () => {
  const r = await neutralBuild('dist/src/server/index.js');
  assert.ok(
    r.errors.some((e) => /node:/.test(e)),
    `expected unresolvable node:* imports, got ${r.errors.join('; ')}`,
  );
});
