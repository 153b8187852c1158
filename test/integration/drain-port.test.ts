// Field hardening, item 6: a SIGTERM drain must not hold the port. close() stops accepting at
// once (the listening socket is closed first) while connections already open finish their work,
// so a replacement process can bind the same port during the grace period.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { withDeadline } from '../helpers/deadline.js';
import { assertRefusal, RawSession, toolCall } from '../helpers/http.js';
import { startServer } from '../helpers/test-server.js';

function bindOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

describe('drain releases the port', () => {
  test('during close({ graceMs }) a new listener binds the same port; the request in flight still finishes', async () => {
    const running = await startServer({ streamAfterMs: 50_000 });
    const s = new RawSession(running.url);
    await s.init();
    const inflight = s.post(toolCall('slow', { ms: 800 }), {}, 10_000);
    await withDeadline(running.probe.onStart('slow'), 5_000, 'slow tool starts');
    const closing = running.served.close({ graceMs: 5_000 });
    // The listener is closed synchronously by close(); give the event loop one turn.
    await new Promise((r) => setImmediate(r));
    assert.equal(await bindOnce(running.port), true, 'the port is free while the drain runs');
    const r = await inflight;
    assert.equal(r.status, 200);
    assert.equal(r.json().result.content[0].text, 'slept 800');
    const report = await withDeadline(closing, 8_000, 'close');
    assert.equal(report.drained, true);
  });

  test('a JSON answer cut at the deadline is 503 without Retry-After: it was dispatched, so a client must not re-send it blindly', async () => {
    const running = await startServer({ mode: 'json' });
    const s = new RawSession(running.url);
    await s.init();
    const inflight = s.post(toolCall('slow', { ms: 20_000 }), {}, 10_000);
    await withDeadline(running.probe.onStart('slow'), 5_000, 'slow tool starts');
    const report = await withDeadline(running.served.close({ graceMs: 100 }), 5_000, 'close');
    assert.equal(report.cutRequests, 1);
    const r = await inflight;
    assertRefusal(r, 503, -32000, 'request-cut');
    assert.equal(r.headers['retry-after'], undefined);
  });
});
