/**
 * The published declarations stand on their own: scripts/public-types/consumer.ts imports
 * `sluice/server` and `sluice/client` through the package's exports (dist/, built with
 * stripInternal) and is type-checked with skipLibCheck off. A public type that referred to a
 * stripped or missing declaration fails here.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withDeadline } from '../helpers/deadline.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

test('a consumer type-checks against the built .d.ts files', async () => {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const result = await withDeadline(
    new Promise<{ code: number | null; out: string }>((done) => {
      execFile(
        process.execPath,
        [tsc, '-p', join(ROOT, 'scripts/public-types/tsconfig.json')],
        { cwd: ROOT },
        (error, stdout, stderr) =>
          done({ code: error === null ? 0 : (error.code as number | null), out: stdout + stderr }),
      );
    }),
    120_000,
    'tsc on the public-types consumer',
  );
  assert.equal(result.code, 0, result.out);
  // stripInternal is what keeps internals out of the .d.ts: nothing tagged @internal may ship.
  const transport = readFileSync(join(ROOT, 'dist/src/client/transport.d.ts'), 'utf8');
  assert.doesNotMatch(
    transport,
    /@internal|^\s+(readonly\s+)?(pending|aliases|inflight|runner|session|options|url|request|receive)\b/m,
  );
  const http = readFileSync(join(ROOT, 'dist/src/client/http-node.d.ts'), 'utf8');
  assert.doesNotMatch(http, /nodeResponse/);
});
