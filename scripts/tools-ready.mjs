// Imported by the entries scripts/run-tests.mjs generates for the test files that need tools/
// (scripts/tool-files.mjs): waits until scripts/install-tools.mjs, started by run-tests.mjs beside
// the first test files, has ended. run-tests.mjs writes its exit code to the file named by
// SLUICE_TOOLS_DONE; with no such variable (a file run by hand) there is nothing to wait for.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** Longer than the installs take on a fresh clone (about 40 s): a stalled registry fails here. */
const DEADLINE_MS = 300_000;

/** Resolves once the tool installs ended with 0; throws when they failed or did not end in time. */
export async function toolsReady(file) {
  const done = process.env.SLUICE_TOOLS_DONE;
  if (done === undefined || done === '') return;
  const until = Date.now() + DEADLINE_MS;
  for (;;) {
    let code;
    try {
      code = readFileSync(done, 'utf8');
    } catch (e) {
      if (e.code !== 'ENOENT') throw e;
    }
    if (code !== undefined) {
      if (code.trim() === '0') return;
      throw new Error(
        `${file}: the tool installs failed (scripts/install-tools.mjs exited ${code.trim()}; its output is printed at the end)`,
      );
    }
    if (Date.now() > until)
      throw new Error(
        `${file}: the tool installs (scripts/install-tools.mjs) did not end within ${DEADLINE_MS / 1000} s`,
      );
    await sleep(200);
  }
}
