// A Cloudflare Worker (module syntax) serving the demo server through createFetchHandler, bundled by
// test/runtimes/workerd-serve.mjs with esbuild and run by miniflare's workerd. The handler is built
// on the first request: Workers forbid timers and random values at global scope. Sessions live in
// this one isolate's memory (see docs/runtimes.md).
import { createDemoServer } from '../../dist/src/demo/demo-server.js';
import { createFetchHandler } from '../../dist/src/fetch/index.js';

let handler;

export default {
  fetch(request, env) {
    if (new URL(request.url).pathname !== '/mcp') return new Response('not found', { status: 404 });
    handler ??= createFetchHandler({ createServer: () => createDemoServer(), mode: env.MODE ?? 'auto' });
    return handler(request, { remoteAddress: request.headers.get('cf-connecting-ip') ?? undefined });
  },
};
