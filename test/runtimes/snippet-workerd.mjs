// Runs a docs snippet that is a Cloudflare Worker (module syntax) on workerd: bundles it with esbuild
// as test/runtimes/workerd-serve.mjs does and serves it with miniflare on 127.0.0.1, then prints the
// line the snippet test waits for. Usage: node test/runtimes/snippet-workerd.mjs path/to/worker.mjs
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

const entry = process.argv[2];
if (entry === undefined) throw new Error('usage: snippet-workerd.mjs <worker module>');
const bundle = await build({
  entryPoints: [entry],
  write: false,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  conditions: ['workerd', 'worker', 'import'],
  external: ['node:*'],
  logLevel: 'error',
});
const mf = new Miniflare({
  modules: true,
  script: bundle.outputFiles[0].text,
  compatibilityDate: '2026-04-01',
  compatibilityFlags: ['nodejs_compat'],
  host: '127.0.0.1',
  port: 0,
});
const url = await mf.ready;
console.log(`MCP endpoint: http://127.0.0.1:${url.port}/mcp`);
const stop = () => {
  mf.dispose().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
// Miniflare's own signal hook exits with 128+signal; this runner disposes it and exits 0, as the
// snippet test expects of a server that shut down cleanly.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.removeAllListeners(signal);
  process.once(signal, stop);
}
