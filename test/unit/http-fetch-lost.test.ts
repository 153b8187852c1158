// The fetch adapter's reading of a failed fetch (src/client/http-fetch.ts): a connection lost before a response
// head (undici's cause "other side closed" or ECONNRESET/EPIPE, Bun's code on the error, Deno's words on the
// cause) is re-sent when the
// request is resendable (at most 3 more times) and is otherwise a StaleConnectionError for the transport to
// judge; anything else (a refused connection, a TypeError without a code, an abort) is passed on untouched.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Canceller, StaleConnectionError } from '../../src/client/http-client.js';
import { createFetchHttp } from '../../src/client/http-fetch.js';

const URL_ = new URL('http://127.0.0.1:1/mcp');

function undiciLost(code: string): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code }) });
}

/** Deno's fetch (2.9.6): no code, its HTTP stack's words on the cause. */
function denoFailed(message: string): Error {
  return new TypeError('fetch failed', { cause: new Error(message) });
}
const DENO_RESET = 'Connection reset by peer (os error 104)';
const DENO_CLOSED =
  'error sending request from 127.0.0.1:34914 for http://127.0.0.1:3982/mcp (127.0.0.1:3982): client error (SendRequest): connection closed before message completed';
const DENO_REFUSED =
  'error sending request for url (http://127.0.0.1:3983/mcp): client error (Connect): tcp connect error: Connection refused (os error 111)';

/** A fetch that fails with each of `failures` in turn, then answers 200. */
function flaky(failures: unknown[]): { fetch: typeof globalThis.fetch; calls: () => number } {
  let calls = 0;
  const fetchFn = async (): Promise<Response> => {
    const failure = failures[calls++];
    if (failure !== undefined) throw failure;
    return new Response('{}', { status: 200 });
  };
  return { fetch: fetchFn as typeof globalThis.fetch, calls: () => calls };
}

test('a lost connection: a resendable request goes again, up to 3 more times', async () => {
  for (const lost of [
    undiciLost('UND_ERR_SOCKET'),
    undiciLost('ECONNRESET'),
    undiciLost('EPIPE'),
    Object.assign(new Error('The socket connection was closed unexpectedly'), { code: 'ECONNRESET' }),
    denoFailed(DENO_RESET),
    denoFailed(DENO_CLOSED),
  ]) {
    const f = flaky([lost, lost, lost]);
    const r = await createFetchHttp(f.fetch).request('GET', URL_, {}, undefined, new Canceller(), true);
    assert.equal(r.status, 200);
    assert.equal(f.calls(), 4);
    const g = flaky([lost, lost, lost, lost]);
    await assert.rejects(
      createFetchHttp(g.fetch).request('GET', URL_, {}, undefined, new Canceller(), true),
      (e) => e === lost,
    );
    assert.equal(g.calls(), 4);
  }
});

test('a lost connection on a request that is not resendable: StaleConnectionError, sent once', async () => {
  const lost = undiciLost('UND_ERR_SOCKET');
  const f = flaky([lost]);
  await assert.rejects(
    createFetchHttp(f.fetch).request('POST', URL_, {}, '{}', new Canceller(), false),
    (e) => e instanceof StaleConnectionError && e.cause === lost,
  );
  assert.equal(f.calls(), 1);
});

test('other failures pass through untouched, never re-sent: refused, no code, aborted', async () => {
  const refused = undiciLost('ECONNREFUSED');
  const plain = new TypeError('Failed to fetch');
  // Deno: a connection never made, and a reset named on the error itself rather than on a cause.
  const denoRefused = denoFailed(DENO_REFUSED);
  const denoConnectReset = denoFailed(`client error (Connect): ${DENO_RESET}`);
  const notACause = new TypeError(DENO_RESET);
  for (const failure of [refused, plain, denoRefused, denoConnectReset, notACause]) {
    for (const resendable of [true, false]) {
      const f = flaky([failure]);
      await assert.rejects(
        createFetchHttp(f.fetch).request('POST', URL_, {}, '{}', new Canceller(), resendable),
        (e) => e === failure,
      );
      assert.equal(f.calls(), 1);
    }
  }
  const cancel = new Canceller();
  const lost = undiciLost('ECONNRESET');
  const f = flaky([lost]);
  const pending = createFetchHttp(async (...args) => {
    cancel.abort();
    return f.fetch(...args);
  }).request('GET', URL_, {}, undefined, cancel, true);
  await assert.rejects(pending, (e) => e === lost);
  assert.equal(f.calls(), 1);
});
