// Runs a docs snippet that is a Cloudflare Worker (module syntax) on workerd, as workerd-serve.mjs
// runs the demo (workerd-run.mjs), then prints the line the snippet test waits for.
// Usage: node test/runtimes/snippet-workerd.mjs path/to/worker.mjs
import { runWorker } from './workerd-run.mjs';

const entry = process.argv[2];
if (entry === undefined) throw new Error('usage: snippet-workerd.mjs <worker module>');
const port = await runWorker(entry);
console.log(`MCP endpoint: http://127.0.0.1:${port}/mcp`);
