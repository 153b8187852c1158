// `sluice serve` for Deno: the demo server through createFetchHandler and Deno.serve. Prints the
// same ready line as the CLI. Usage: deno run --allow-net=127.0.0.1 --allow-read --allow-env
// test/runtimes/deno-serve.mjs [auto|json|sse]
import { createDemoServer } from '../../dist/src/demo/demo-server.js';
import { createFetchHandler } from '../../dist/src/fetch/index.js';

const mode = Deno.args[0] ?? 'auto';
const handler = createFetchHandler({ createServer: () => createDemoServer(), mode });
const server = Deno.serve(
  {
    hostname: '127.0.0.1',
    port: 0,
    onListen({ port }) {
      console.log(`sluice listening on http://127.0.0.1:${port}/mcp`);
    },
  },
  (request, info) => {
    if (new URL(request.url).pathname !== '/mcp') return new Response('not found', { status: 404 });
    return handler(request, { remoteAddress: info.remoteAddr.hostname });
  },
);
Deno.addSignalListener('SIGTERM', () => {
  handler
    .close({ graceMs: 1000 })
    .then(() => server.shutdown())
    .then(
      () => Deno.exit(0),
      () => Deno.exit(1),
    );
});
