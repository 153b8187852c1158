// `sluice serve` for Bun: the demo server through createFetchHandler and Bun.serve. Prints the same
// ready line as the CLI. Usage: bun test/runtimes/bun-serve.mjs [auto|json|sse]
import { createDemoServer } from '../../dist/src/demo/demo-server.js';
import { createFetchHandler } from '../../dist/src/fetch/index.js';

const mode = process.argv[2] ?? 'auto';
const handler = createFetchHandler({ createServer: () => createDemoServer(), mode });
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  // Bun cuts a connection idle for 10 s by default; SSE keepalives come every 15 s.
  idleTimeout: 0,
  fetch(request, srv) {
    if (new URL(request.url).pathname !== '/mcp') return new Response('not found', { status: 404 });
    return handler(request, { remoteAddress: srv.requestIP(request)?.address });
  },
});
console.log(`sluice listening on http://127.0.0.1:${server.port}/mcp`);
process.once('SIGTERM', () => {
  handler.close({ graceMs: 1000 }).then(
    () => {
      server.stop(true);
      process.exit(0);
    },
    () => process.exit(1),
  );
});
