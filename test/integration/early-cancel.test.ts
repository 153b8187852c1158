// A cancel that overtakes its request (issue 21, item 12). A client POSTs a tools/call and then its
// notifications/cancelled, each on its own connection; under load the cancel can arrive first. It
// used to be dropped (the SDK ignores a cancel for an unknown id) and the call ran to its end. The
// session now holds such a cancel briefly (core/era-2025/early-cancel.ts: at most 64, for 5 s) and the
// request, when it comes, is never dispatched. The order is made explicit here: cancel first, then
// the request, on both bindings.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EARLY_CANCEL_MAX, EARLY_CANCEL_MS } from '../../src/core/era-2025/early-cancel.js';
import { serve } from '../../src/server/index.js';
import { notification, RawSession, toolCall } from '../helpers/http.js';
import { serveFetch } from '../helpers/serve-fetch.js';
import { createProbe, type Probe, testServerFactory } from '../helpers/test-server.js';

for (const binding of ['node', 'fetch'] as const) {
  describe(`a cancel that arrives before its request (${binding} binding)`, () => {
    let served: Awaited<ReturnType<typeof serve>>;
    let probe: Probe;
    let s: RawSession;
    // The server's clock, moved forward by the expiry test.
    let skewMs = 0;
    before(async () => {
      probe = createProbe();
      const o = {
        createServer: testServerFactory(probe),
        port: 0,
        host: '127.0.0.1',
        keepaliveMs: 0,
        now: () => Date.now() + skewMs,
      };
      served = binding === 'fetch' ? await serveFetch(o) : await serve(o);
      s = new RawSession(served.url);
      await s.init();
    });
    after(() => served.close());

    const echoes = () => probe.started.get('echo') ?? 0;
    const cancel = async (requestId: string) => {
      const r = await s.post(notification('notifications/cancelled', { requestId, reason: 'test' }));
      assert.equal(r.status, 202);
    };
    /** Calls echo with this id: 'cancelled' (202, no body, the tool never ran) or 'ran'. */
    const call = async (id: string): Promise<'cancelled' | 'ran'> => {
      const before = echoes();
      const r = await s.post(toolCall('echo', { text: id }, id));
      if (r.status === 202) {
        assert.equal(r.text, '');
        assert.equal(echoes(), before, `${id}: the tool did not run`);
        return 'cancelled';
      }
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json().result.content[0].text, id);
      return 'ran';
    };

    test('the cancel wins: the request is never dispatched and gets no response', async () => {
      await cancel('early-1');
      assert.equal(await call('early-1'), 'cancelled');
      assert.equal(served.handler.stats().streams.open.post, 0);
      // Held once: nothing else is affected, and the session goes on.
      assert.equal(await call('other-1'), 'ran');
    });

    test(`a held cancel expires after ${EARLY_CANCEL_MS} ms`, async () => {
      await cancel('late-1');
      skewMs += EARLY_CANCEL_MS;
      try {
        assert.equal(await call('late-1'), 'ran');
      } finally {
        skewMs = 0;
      }
    });

    test(`at most ${EARLY_CANCEL_MAX} are held per session: the oldest is forgotten`, async () => {
      for (let i = 0; i <= EARLY_CANCEL_MAX; i++) await cancel(`held-${i}`);
      assert.equal(await call('held-0'), 'ran');
      assert.equal(await call(`held-${EARLY_CANCEL_MAX}`), 'cancelled');
      assert.equal(await call('held-1'), 'cancelled');
    });

    test('held per session: a cancel in one session does not reach the same id in another', async () => {
      const other = new RawSession(served.url);
      await other.init();
      await cancel('shared-1');
      const r = await other.post(toolCall('echo', { text: 'mine' }, 'shared-1'));
      assert.equal(r.status, 200, r.text);
      await other.delete();
      assert.equal(await call('shared-1'), 'cancelled');
    });
  });
}
