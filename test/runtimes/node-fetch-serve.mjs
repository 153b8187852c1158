// `sluice serve` through the fetch binding under Node: createFetchHandler behind the tests'
// node:http ↔ Request/Response adapter. Prints the same ready line as the CLI.
// Usage: node test/runtimes/node-fetch-serve.mjs [auto|json|sse]
import { createDemoServer } from '../../dist/src/demo/demo-server.js';
import { createFetchHandler } from '../../dist/src/fetch/index.js';
import { listenFetch } from '../../dist/test/helpers/fetch-adapter.js';

const mode = process.argv[2] ?? 'auto';
const handler = createFetchHandler({ createServer: () => createDemoServer(), mode });
const { server, port } = await listenFetch(handler);
console.log(`sluice listening on http://127.0.0.1:${port}/mcp`);
process.once('SIGTERM', () => {
  handler.close({ graceMs: 1000 }).then(
    () => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    },
    () => process.exit(1),
  );
});
