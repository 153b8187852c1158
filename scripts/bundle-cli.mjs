// After `tsc`: the `sluice` command (dist/src/cli/main.js) becomes a bundle of Sluice's own modules, one
// chunk per subcommand under dist/src/cli/bundle/. Packages (the SDK, zod, node-redis, jose, …) stay
// imports, so the command runs the SDK the user installed, and each subcommand still loads only what it
// needs (a chunk is imported when its command runs: `sluice --version` loads no SDK).
//
// Why: Node 20's ESM loader pays about a millisecond of CPU per module it resolves, reads and links, and
// `sluice serve` loaded some 200 of Sluice's own. As one file per command, a start costs less CPU
// (docs/benchmarks.md, "CLI start-up"), for a user's `npx sluice` and for each of the hundreds of
// processes `npm test` starts. The library entry points (`sluice/server`, `sluice/client`, …) are tsc's
// modules, unchanged: only the command is bundled.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const outdir = 'dist/src/cli';
// The entry must be tsc's main.js: a second run on its own output would bundle chunks it just removed.
if (readFileSync(`${outdir}/main.js`, 'utf8').includes('./bundle/')) {
  process.stderr.write(`${outdir}/main.js is the bundle already: run tsc first (npm run build does both)\n`);
  process.exit(1);
}
rmSync(`${outdir}/bundle`, { recursive: true, force: true });
const result = await build({
  entryPoints: { main: `${outdir}/main.js` },
  outdir,
  // The entry replaces tsc's main.js, whose path package.json's `bin` names and main.js's own relative
  // reads (package.json, three levels up) assume; tsc writes it again on each build.
  allowOverwrite: true,
  chunkNames: 'bundle/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  // Maps to the TypeScript sources through tsc's maps (not in the package, as tsc's are not).
  sourcemap: 'linked',
  // Which modules each chunk holds (bundle/meta.json, not in the package): test/integration/serve-startup.test.ts
  // reads it to tell which of Sluice's modules a start loaded.
  metafile: true,
  logLevel: 'warning',
});
writeFileSync(`${outdir}/bundle/meta.json`, JSON.stringify(result.metafile.outputs));
