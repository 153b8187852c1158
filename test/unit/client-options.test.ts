import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { reconnectDelay } from '../../src/client/backoff.js';
import {
  AlreadyStartedError,
  IDEMPOTENCY_KEY_META,
  InvalidOptionError,
  idempotencyMeta,
  StreamableHttpClientTransport,
} from '../../src/client/index.js';
import { resolveOptions } from '../../src/client/resolve-options.js';
import { mediaType } from '../../src/http/media-type.js';
import { classify } from '../../src/jsonrpc/message.js';

describe('client options', () => {
  test('defaults are merged per field', () => {
    const o = resolveOptions({ idleTimeoutMs: 1234 });
    assert.equal(o.idleTimeoutMs, 1234);
    assert.equal(o.maxEventBytes, 16 * 1024 * 1024);
    assert.equal(o.maxReconnectAttempts, 5);
    assert.equal(o.closeTimeoutMs, 5_000);
    assert.equal(o.reinitializeOnSessionExpiry, true);
    assert.equal(o.standaloneReadyWaitMs, 500);
    assert.equal(resolveOptions({ standaloneReadyWaitMs: 0 }).standaloneReadyWaitMs, 0);
    assert.equal(o.insecureOAuthUrls, false);
    assert.equal(resolveOptions({ insecureOAuthUrls: true }).insecureOAuthUrls, true);
    assert.equal(o.redirectPolicy, 'same-origin');
    assert.equal(resolveOptions({ redirectPolicy: 'follow' }).redirectPolicy, 'follow');
  });

  test('impossible values throw InvalidOptionError in the constructor', () => {
    const bad = [
      { idleTimeoutMs: 0 },
      { maxEventBytes: 10 },
      { maxReconnectAttempts: 1.5 },
      { initialReconnectDelayMs: 5000, maxReconnectDelayMs: 100 },
      { closeTimeoutMs: Number.NaN },
      { standaloneReadyWaitMs: -1 },
      { sessionId: 'has space' },
      { insecureOAuthUrls: 'yes' as unknown as boolean },
      { redirectPolicy: 'error' as unknown as 'follow' },
    ];
    for (const options of bad) {
      assert.throws(
        () => new StreamableHttpClientTransport('http://127.0.0.1:1/mcp', options),
        (e: unknown) => e instanceof InvalidOptionError && e.code === 'SLUICE_INVALID_OPTION',
        JSON.stringify(options),
      );
    }
  });

  test('misuse of the public API throws typed errors with stable codes', async () => {
    assert.throws(
      () => idempotencyMeta(''),
      (e: unknown) => e instanceof InvalidOptionError && e.code === 'SLUICE_INVALID_OPTION',
    );
    const transport = new StreamableHttpClientTransport('http://127.0.0.1:1/mcp');
    assert.deepEqual(transport.inspect(), {
      sessionId: undefined,
      protocolVersion: undefined,
      pendingRequestIds: [],
      httpRequestsInFlight: 0,
      started: false,
      closed: false,
    });
    await transport.start();
    assert.equal(transport.inspect().started, true);
    await assert.rejects(
      transport.start(),
      (e: unknown) => e instanceof AlreadyStartedError && e.code === 'SLUICE_CLIENT_ALREADY_STARTED',
    );
    await transport.close();
    assert.equal(transport.inspect().closed, true);
  });

  test('backoff: jittered exponential within [d/2, d], capped; a server retry is the first delay and the floor of later ones', () => {
    const base = { initialReconnectDelayMs: 100, maxReconnectDelayMs: 1_000 };
    assert.equal(reconnectDelay({ ...base, random: () => 0.5 }, 0, 500), 500, 'the first delay is the retry');
    assert.equal(reconnectDelay({ ...base, random: () => 0.99 }, 0, 20), 20, 'even a short one');
    // A hostile retry: is bounded by the cap (a timer past 2^31-1 ms would fire at once).
    assert.equal(reconnectDelay({ ...base, random: () => 0.5 }, 0, 1e15), 1_000, 'a huge retry is capped');
    assert.equal(reconnectDelay({ ...base, random: () => 0.5 }, 2, Infinity), 1_000, 'later ones too');
    assert.equal(
      reconnectDelay({ ...base, random: () => 0.5 }, 1, 500),
      500,
      'retry wins over a shorter backoff',
    );
    assert.equal(
      reconnectDelay({ ...base, random: () => 0.5 }, 3, 500),
      600,
      'backoff wins over a shorter retry',
    );
    // The defaults under Sluice's `retry: 1000`: five attempts span at least 16 s, more than the
    // cluster's default 10 s owner lease (docs/scale-out.md, "owner killed").
    const d = resolveOptions();
    let least = 0;
    for (let attempt = 0; attempt < d.maxReconnectAttempts; attempt++)
      least += reconnectDelay({ ...d, random: () => 0 }, attempt, 1_000);
    assert.equal(least, 16_000);
    for (let attempt = 0; attempt < 10; attempt++) {
      const ceiling = Math.min(1_000, 100 * 2 ** attempt);
      const low = reconnectDelay({ ...base, random: () => 0 }, attempt, undefined);
      const high = reconnectDelay({ ...base, random: () => 0.999999 }, attempt, undefined);
      assert.equal(low, ceiling / 2);
      assert.ok(high <= ceiling && high > ceiling * 0.99);
    }
  });

  test('idempotency: default methods, the _meta key, or a custom predicate', () => {
    const o = resolveOptions();
    assert.equal(o.isIdempotent({ id: 1, method: 'tools/list' }), true);
    assert.equal(o.isIdempotent({ id: 1, method: 'tools/call', params: { name: 'x' } }), false);
    assert.equal(
      o.isIdempotent({ id: 1, method: 'tools/call', params: { _meta: idempotencyMeta('k1') } }),
      true,
    );
    assert.equal(
      o.isIdempotent({ id: 1, method: 'tools/call', params: { _meta: { [IDEMPOTENCY_KEY_META]: '' } } }),
      false,
    );
    assert.equal(
      resolveOptions({ isIdempotent: () => true }).isIdempotent({ id: 1, method: 'tools/call' }),
      true,
    );
    assert.throws(() => idempotencyMeta(''));
  });
});

describe('wire helpers', () => {
  test('mediaType parses the essence, never a substring', () => {
    assert.equal(mediaType('text/event-stream'), 'text/event-stream');
    assert.equal(mediaType(' Application/JSON ; charset=utf-8'), 'application/json');
    assert.equal(mediaType('application/json-seq'), 'application/json-seq');
    assert.equal(mediaType('text/html, text/event-stream'), undefined);
    assert.equal(mediaType(null), undefined);
    assert.equal(mediaType('json'), undefined);
  });

  test('the client routes with the shared classifier', () => {
    const kind = (v: unknown) => classify(v).kind;
    assert.equal(kind({ jsonrpc: '2.0', id: 1, method: 'ping' }), 'request');
    assert.equal(kind({ jsonrpc: '2.0', method: 'notifications/progress' }), 'notification');
    assert.equal(kind({ jsonrpc: '2.0', id: 'a', result: {} }), 'response');
    assert.equal(kind({ jsonrpc: '2.0', id: 2, error: { code: 1, message: 'x' } }), 'response');
    assert.equal(kind({ jsonrpc: '2.0', id: null, error: {} }), 'invalid');
    assert.equal(kind([]), 'invalid');
    assert.equal(kind('x'), 'invalid');
  });
});
