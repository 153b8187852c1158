// Field hardening, item 3: one unauthenticated client must not fill the session cap. Sessions held
// and the initialize rate are limited per client (principal when authenticated, else remote
// address); a flood from one address is refused with 429 + Retry-After while another address
// (127.0.0.2 as the client's local address) still gets sessions.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, describe, test } from 'node:test';
import { addressKey, ClientLimits } from '../../src/core/limits/client-limits.js';
import { resolveOptions } from '../../src/core/options.js';
import { InvalidOptionError } from '../../src/errors.js';
import { withDeadline } from '../helpers/deadline.js';
import { ACCEPT_BOTH, initializeBody, type Loose, RawSession } from '../helpers/http.js';
import { startServer } from '../helpers/test-server.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Loose;
}

/** POSTs initialize from `localAddress`; the whole answer. */
function initializeFrom(url: string, localAddress: string, auth?: string): Promise<Answer> {
  const p = new Promise<Answer>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: {
          'content-type': 'application/json',
          accept: ACCEPT_BOTH,
          ...(auth === undefined ? {} : { authorization: `Bearer ${auth}` }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(initializeBody()));
  });
  return withDeadline(p, 5_000, `initialize from ${localAddress}`);
}

describe('per-client session limits', () => {
  test('a flood from one address holds at most maxSessions and is refused with 429; another address still gets a session', async () => {
    const srv = await startServer({
      keepaliveMs: 0,
      clientLimits: { maxSessions: 5, initializePerSecond: 1, initializeBurst: 50 },
    });
    after(() => srv.close());
    const flood = await Promise.all(Array.from({ length: 40 }, () => initializeFrom(srv.url, '127.0.0.1')));
    const ok = flood.filter((r) => r.status === 200).length;
    const refused = flood.filter((r) => r.status === 429);
    assert.equal(ok, 5);
    assert.equal(refused.length, 35);
    for (const r of refused) {
      assert.equal(r.body.error.data.reason, 'client-session-limit');
      assert.equal(r.body.error.code, -32000);
      assert.match(String(r.headers['retry-after']), /^[1-9]\d*$/);
    }
    const other = await initializeFrom(srv.url, '127.0.0.2');
    assert.equal(other.status, 200, JSON.stringify(other.body));
    const st = srv.stats().sessions;
    assert.equal(st.active, 6);
    assert.equal(st.clientLimitRefusals.sessions, 35);
    assert.match(srv.served.handler.metrics(), /sluice_client_limit_refusals_total\{limit="sessions"\} 35/);

    // Ending one of the flood's sessions gives its client a slot back.
    const s = new RawSession(srv.url);
    s.sid = String(flood.find((r) => r.status === 200)?.headers['mcp-session-id']);
    s.version = '2025-11-25';
    assert.equal((await s.delete()).status, 204);
    assert.equal((await initializeFrom(srv.url, '127.0.0.1')).status, 200);
  });

  test('the initialize rate is a token bucket per client: past the burst, 429 initialize-rate with Retry-After', async () => {
    const srv = await startServer({
      keepaliveMs: 0,
      clientLimits: { initializePerSecond: 0.5, initializeBurst: 3 },
    });
    after(() => srv.close());
    const statuses: number[] = [];
    let last: Answer | undefined;
    for (let i = 0; i < 5; i++) {
      last = await initializeFrom(srv.url, '127.0.0.1');
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    assert.equal(last?.body.error.data.reason, 'initialize-rate');
    assert.equal(last?.headers['retry-after'], '2');
    assert.equal((await initializeFrom(srv.url, '127.0.0.2')).status, 200);
    assert.equal(srv.stats().sessions.clientLimitRefusals.rate, 2);
  });

  test('with authentication the limit is per principal, whatever the address', async () => {
    const srv = await startServer({
      keepaliveMs: 0,
      clientLimits: { maxSessions: 2 },
      authenticate: (req) => {
        const h = req.headers.authorization ?? '';
        return h.startsWith('Bearer ') ? { principal: h.slice(7) } : null;
      },
    });
    after(() => srv.close());
    assert.equal((await initializeFrom(srv.url, '127.0.0.1', 'alice')).status, 200);
    assert.equal((await initializeFrom(srv.url, '127.0.0.2', 'alice')).status, 200);
    assert.equal((await initializeFrom(srv.url, '127.0.0.3', 'alice')).status, 429);
    assert.equal((await initializeFrom(srv.url, '127.0.0.1', 'bob')).status, 200);
  });

  test('the table is bounded: entries that hold nothing are evicted, least recently used first', () => {
    const limits = new ClientLimits({
      maxSessions: 10,
      initializePerSecond: 1,
      initializeBurst: 1,
      maxTracked: 3,
    });
    for (let i = 0; i < 10; i++) {
      const a = limits.admit(`a:10.0.0.${i}`, 0);
      assert.ok('settle' in a);
      a.settle(false);
      assert.ok(limits.tracked <= 3);
    }
    // Holders are never evicted: with three holders, a fourth client is refused (503).
    const full = new ClientLimits({
      maxSessions: 10,
      initializePerSecond: 1,
      initializeBurst: 1,
      maxTracked: 3,
    });
    for (let i = 0; i < 3; i++) {
      const a = full.admit(`a:h${i}`, 0);
      assert.ok('settle' in a);
      a.settle(true);
    }
    const refused = full.admit('a:new', 0);
    assert.ok(!('settle' in refused));
    assert.equal(refused.status, 503);
    // Sweeping drops entries that hold nothing once their bucket has refilled.
    full.release('a:h0');
    full.sweep(10_000);
    assert.equal(full.tracked, 2);
  });

  test('addresses: IPv6 by /64, IPv4-mapped as IPv4', () => {
    assert.equal(addressKey('10.1.2.3'), '10.1.2.3');
    assert.equal(addressKey('::ffff:10.1.2.3'), '10.1.2.3');
    assert.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
  });

  test('options are validated once', () => {
    assert.throws(() => resolveOptions({ clientLimits: { maxSessions: 0 } }), InvalidOptionError);
    assert.throws(() => resolveOptions({ clientLimits: { initializePerSecond: -1 } }), InvalidOptionError);
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '4' as unknown as number]) {
      assert.throws(
        () => resolveOptions({ clientLimits: { maxConcurrentRequests: bad } }),
        (e: unknown) =>
          e instanceof InvalidOptionError && /clientLimits\.maxConcurrentRequests/.test(e.message),
        `maxConcurrentRequests ${String(bad)}`,
      );
    }
    assert.equal(resolveOptions({ clientLimits: false }).clientLimits, undefined);
    assert.deepEqual(resolveOptions({}).clientLimits, {
      maxSessions: 1000,
      initializePerSecond: 20,
      initializeBurst: 100,
      maxTracked: 10_000,
      maxConcurrentRequests: 128,
    });
    assert.equal(
      resolveOptions({ clientLimits: { maxConcurrentRequests: 4 } }).clientLimits?.maxConcurrentRequests,
      4,
    );
  });
});
