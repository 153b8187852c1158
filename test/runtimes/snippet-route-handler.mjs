// Serves a docs snippet that is a route-handler module (a Next.js App Router `route.js`: exported
// `GET`/`POST`/`DELETE`/`OPTIONS` functions taking a `Request` and returning a `Response`) under
// Node, through the tests' node:http ↔ Request/Response adapter, as a framework would call it.
// Prints the line the snippet test waits for. Usage: node test/runtimes/snippet-route-handler.mjs route.mjs
import { pathToFileURL } from 'node:url';
import { listenFetch } from '../../dist/test/helpers/fetch-adapter.js';

const entry = process.argv[2];
if (entry === undefined) throw new Error('usage: snippet-route-handler.mjs <route module>');
const route = await import(pathToFileURL(entry).href);
const handler = (request) => {
  const fn = route[request.method];
  if (typeof fn !== 'function') return Promise.resolve(new Response(null, { status: 405 }));
  return Promise.resolve(fn(request));
};
const { server, port } = await listenFetch(handler);
console.log(`MCP endpoint: http://127.0.0.1:${port}/mcp`);
process.once('SIGINT', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
