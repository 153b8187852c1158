// The client on Deno or Bun through a proxy that forwards a request and then cuts the connection
// before any response byte (test/integration/client-runtimes-cut.test.ts runs the proxy and the
// server). Each line printed is one call's outcome as JSON. Usage: `deno run --allow-net=127.0.0.1
// --allow-read --allow-env test/runtimes/client-cut.mjs URL [ADAPTER...]` or `bun
// test/runtimes/client-cut.mjs URL [ADAPTER...]`, where ADAPTER is `default` (the transport's own
// choice), `fetch` (a pooled global fetch passed as options.fetch) or, on Deno, `unpooled` (a fetch
// on a Deno HTTP client that never reuses a connection).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { idempotencyMeta, StreamableHttpClientTransport } from '../../dist/src/client/index.js';

const args = globalThis.Deno?.args ?? process.argv.slice(2);
const url = new URL(args[0] ?? '');
const names = args.length > 1 ? args.slice(1) : ['default'];
const options = (name) => {
  if (name === 'fetch') return { fetch: (u, init) => globalThis.fetch(u, init) };
  if (name === 'unpooled') {
    const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    return { fetch: (u, init) => globalThis.fetch(u, { ...init, client }) };
  }
  return {};
};
const outcome = (p) =>
  p.then(
    (r) => `ok ${r.content?.[0]?.text ?? ''}`,
    (e) => `${e?.code ?? ''} ${String(e?.message ?? e).slice(0, 160)}`,
  );
for (const adapter of names) {
  const client = new Client({ name: `cut-${adapter}`, version: '1' });
  await client.connect(
    new StreamableHttpClientTransport(url, { openStandaloneStream: false, ...options(adapter) }),
  );
  for (let i = 0; i < 3; i++) {
    // A ping first, so the call goes out on a reused keep-alive connection where the adapter keeps one.
    await client.ping();
    const text = `cut-${adapter}-${i}`;
    const r = await outcome(client.callTool({ name: 'echo', arguments: { text } }, CallToolResultSchema));
    console.log(JSON.stringify({ adapter, call: text, outcome: r }));
  }
  await client.ping();
  const keyed = `cut-${adapter}-keyed`;
  const r = await outcome(
    client.callTool(
      { name: 'echo', arguments: { text: keyed }, _meta: idempotencyMeta(keyed) },
      CallToolResultSchema,
    ),
  );
  console.log(JSON.stringify({ adapter, call: keyed, outcome: r }));
  await client.close();
}
