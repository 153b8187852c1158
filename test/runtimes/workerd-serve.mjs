// `sluice serve` on workerd: runs test/runtimes/worker.mjs under miniflare (workerd-run.mjs) on
// 127.0.0.1. Prints the same ready line as the CLI.
// Usage: node test/runtimes/workerd-serve.mjs [auto|json|sse]
import { fileURLToPath } from 'node:url';
import { runWorker } from './workerd-run.mjs';

const port = await runWorker(fileURLToPath(new URL('./worker.mjs', import.meta.url)), {
  MODE: process.argv[2] ?? 'auto',
});
console.log(`sluice listening on http://127.0.0.1:${port}/mcp`);
