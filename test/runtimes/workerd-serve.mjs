// `sluice serve` on workerd: bundles test/runtimes/worker.mjs with esbuild and runs it with miniflare
// (the workerd binary from the npm registry) on 127.0.0.1. Prints the same ready line as the CLI.
// Usage: node test/runtimes/workerd-serve.mjs [auto|json|sse]
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

const mode = process.argv[2] ?? 'auto';
const bundle = await build({
  entryPoints: [fileURLToPath(new URL('./worker.mjs', import.meta.url))],
  write: false,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  conditions: ['workerd', 'worker', 'import'],
  // The demo's node:* modules come from workerd's nodejs_compat layer.
  external: ['node:*'],
  logLevel: 'error',
});
const mf = new Miniflare({
  modules: true,
  script: bundle.outputFiles[0].text,
  compatibilityDate: '2026-04-01',
  compatibilityFlags: ['nodejs_compat'],
  bindings: { MODE: mode },
  host: '127.0.0.1',
  port: 0,
});
const url = await mf.ready;
console.log(`sluice listening on http://127.0.0.1:${url.port}/mcp`);
const stop = () => {
  mf.dispose().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
