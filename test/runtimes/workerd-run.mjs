// Bundles a Worker module with esbuild and serves it with miniflare (the workerd binary from the npm
// registry) on 127.0.0.1; SIGINT/SIGTERM dispose miniflare and exit 0. Shared by workerd-serve.mjs
// (the demo server) and snippet-workerd.mjs (docs snippets). Resolves to the bound port.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';

export async function runWorker(entry, bindings = {}) {
  const bundle = await build({
    entryPoints: [entry],
    write: false,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'import'],
    // node:* modules come from workerd's nodejs_compat layer.
    external: ['node:*'],
    logLevel: 'error',
  });
  // Miniflare makes its scratch directory (a cache database) under os.tmpdir() and, on dispose(),
  // removes it without waiting: a process that exits right after left one behind per run. So it
  // gets a directory of this process's own, removed here once dispose() has resolved.
  const scratch = mkdtempSync(join(tmpdir(), 'sluice-workerd-'));
  process.env.TMPDIR = scratch;
  const mf = new Miniflare({
    modules: true,
    script: bundle.outputFiles[0].text,
    compatibilityDate: '2026-04-01',
    compatibilityFlags: ['nodejs_compat'],
    bindings,
    // Without it Miniflare fetches request.cf's data from workers.cloudflare.com (up to 3 s) when its
    // cached copy is missing or old: network traffic outside loopback. Sluice never reads request.cf.
    cf: false,
    host: '127.0.0.1',
    port: 0,
  });
  const url = await mf.ready;
  const removeScratch = () => rmSync(scratch, { recursive: true, force: true, maxRetries: 5 });
  const stop = () => {
    mf.dispose().then(
      () => {
        removeScratch();
        process.exit(0);
      },
      () => {
        removeScratch();
        process.exit(1);
      },
    );
  };
  // Miniflare's own signal hook exits with 128+signal; dispose it and exit 0, as a server that shut
  // down cleanly does.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.removeAllListeners(signal);
    process.once(signal, stop);
  }
  return url.port;
}
