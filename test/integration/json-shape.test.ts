// Per-request parse cost (issue 21, item 13): within the default maxBodyBytes (4 MiB), a body of
// 200,000 `_meta` keys cost about 1 s of CPU and a 1,000,000-deep nested id about 70 MB before
// anything looked at them. Both are now refused from a scan of the raw text, before JSON.parse,
// with 400 and a stable reason, on both bindings and both eras; they leave no state, and bodies
// near the limits still work.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { assertRefusal, RawSession, rpc } from '../helpers/http.js';
import { modernBody, modernSend } from '../helpers/modern.js';
import { serveFetch } from '../helpers/serve-fetch.js';
import { createProbe, type Probe, testServerFactory } from '../helpers/test-server.js';

/** A tools/call of the test server's echo tool with this `_meta`. */
function echo(text: string, meta: Record<string, unknown>): unknown {
  return rpc('tools/call', { name: 'echo', arguments: { text }, _meta: meta });
}

const meta200k: Record<string, number> = {};
for (let i = 0; i < 200_000; i++) meta200k[`k${i}`] = i;
const manyMetaKeys = JSON.stringify(echo('x', meta200k));
const deepId = `{"jsonrpc":"2.0","method":"ping","id":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`;
const wideArrays = `{"jsonrpc":"2.0","method":"ping","id":1,"params":{"a":[${'[],'.repeat(1_000_000)}[]]}}`;

/** Nested objects `{"d":{"d":…1…}}`, `levels` deep. */
function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { d: v };
  return v;
}

for (const binding of ['node', 'fetch'] as const) {
  describe(`JSON shape limits (${binding} binding)`, () => {
    let served: Awaited<ReturnType<typeof serve>>;
    let probe: Probe;
    let s: RawSession;
    before(async () => {
      probe = createProbe();
      const o = { createServer: testServerFactory(probe), port: 0, host: '127.0.0.1', keepaliveMs: 0 };
      served = binding === 'fetch' ? await serveFetch(o) : await serve(o);
      s = new RawSession(served.url);
      await s.init();
    });
    after(() => served.close());

    const refusals = [
      { name: '200,000 _meta keys', body: () => manyMetaKeys, reason: 'json-too-many-keys' },
      { name: 'a 1,000,000-deep nested id', body: () => deepId, reason: 'json-too-deep' },
      { name: '1,000,000 empty arrays', body: () => wideArrays, reason: 'json-too-many-values' },
    ];
    for (const c of refusals) {
      test(`${c.name}: 400 ${c.reason} at once, nothing parsed, no state`, async () => {
        const body = c.body();
        assert.ok(body.length < 4 * 1024 * 1024, 'within the default maxBodyBytes');
        const statsBefore = served.handler.stats();
        const started = probe.started.size;
        const cpu0 = process.cpuUsage();
        const r = await withDeadline(s.post(body, {}, 10_000), 10_000, c.name);
        const cpu = process.cpuUsage(cpu0);
        assertRefusal(r, 400, -32600, c.reason);
        assert.match(r.json().error.message, /jsonLimits\.max/);
        // Client and server share this process: sending 2–4 MB plus the scan. Parsing these bodies
        // took 0.6–1 s of CPU before the scan (and 2 s and more on a loaded machine).
        const ms = (cpu.user + cpu.system) / 1000;
        assert.ok(ms < 400, `CPU ${Math.round(ms)} ms`);
        const statsAfter = served.handler.stats();
        assert.equal(statsAfter.sessions.active, 1);
        assert.equal(statsAfter.sessions.created, statsBefore.sessions.created);
        assert.deepEqual(statsAfter.streams.open, { post: 0, get: 0 });
        assert.equal(probe.started.size, started, 'no tool ran');
      });
    }

    test('the same bodies as 2026-07-28 requests are refused the same way', async () => {
      const body = modernBody('tools/call', { name: 'echo', arguments: { text: 'x' } }, meta200k);
      const r = await withDeadline(modernSend(served.url, body), 10_000, 'modern _meta keys');
      assertRefusal(r, 400, -32600, 'json-too-many-keys');
    });

    test('bodies at the limits still work: 64 levels deep, 9,000 _meta keys', async () => {
      // Depth: the message 1, params 2, _meta 3, "deep" 4 … 64.
      const deep = await s.post(echo('deep', { deep: nested(61) }));
      assert.equal(deep.status, 200, deep.text.slice(0, 300));
      assert.equal(deep.json().result.content[0].text, 'deep');
      const tooDeep = await s.post(echo('deep', { deep: nested(62) }));
      assertRefusal(tooDeep, 400, -32600, 'json-too-deep');
      const meta: Record<string, number> = {};
      for (let i = 0; i < 9_000; i++) meta[`k${i}`] = i;
      const wide = await s.post(echo('wide', meta));
      assert.equal(wide.status, 200, wide.text.slice(0, 300));
      assert.equal(wide.json().result.content[0].text, 'wide');
    });
  });
}
