// Stateless mode edge cases — the protocol-version header rule and graceful close.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { ACCEPT_BOTH, RawSession, send, toolCall } from '../helpers/http.js';
import { startServer } from '../helpers/test-server.js';

describe('stateless mode', () => {
  test('an unsupported MCP-Protocol-Version is refused with 400, as with sessions', {}, async () => {
    // Sanity: the session-mode server refuses it.
    const stateful = await startServer();
    after(() => stateful.close());
    const s = new RawSession(stateful.url);
    await s.init();
    const r1 = await s.post(toolCall('echo', { text: 'a' }), { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(r1.status, 400);

    const srv = await startServer({ stateless: true });
    after(() => srv.close());
    const r2 = await send(srv.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: ACCEPT_BOTH,
        'mcp-protocol-version': '1999-01-01',
      },
      body: JSON.stringify(toolCall('echo', { text: 'b' })),
    });
    assert.equal(r2.status, 400, `stateless answer: ${r2.status} ${r2.text.slice(0, 200)}`);
  });

  test('close({ graceMs }) lets a request in flight finish (and does not report drained before it did)', {}, async () => {
    const srv = await startServer({ stateless: true });
    after(() => srv.close());
    const started = srv.probe.onStart('slow');
    const reply = send(srv.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
      body: JSON.stringify(toolCall('slow', { ms: 300 }, 'slow-stateless')),
      timeoutMs: 5_000,
    }).then(
      (r) => ({ ok: true as const, r }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    await withDeadline(started, 2_000, 'the slow tool started');
    const report = await withDeadline(srv.served.close({ graceMs: 3_000 }), 5_000, 'served.close');
    const got = await withDeadline(reply, 5_000, 'the POST settled');
    const outcome = got.ok ? `HTTP ${got.r.status}` : String(got.e);
    assert.deepEqual(
      srv.probe.finished,
      ['slow:300'],
      `the handler ran to its end before close returned (close report ${JSON.stringify(report)}; POST: ${outcome})`,
    );
    assert.ok(got.ok, `the POST was answered, not cut: ${got.ok ? '' : String(got.e)}`);
    assert.equal(got.r.status, 200);
    assert.equal(got.r.json().result.content[0].text, 'slept 300');
    assert.deepEqual(report, { sessions: 0, cutRequests: 0, drained: true });
  });
});
