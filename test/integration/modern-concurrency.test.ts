/**
 * Per-client concurrency for 2026-07-28 requests (clientLimits.maxConcurrentRequests), over real
 * sockets. That era has no sessions, so nothing else bounds how many requests one client keeps in
 * flight. Proven here: the request over the limit is 429 + Retry-After with a JSON-RPC error echoing
 * its id, and no server is built for it; a slot comes back when its request is answered, cancelled
 * by the client's close, or refused later in its life (-32020, -32021, 404), so the count returns
 * to zero; principals, and addresses without authentication, have limits of their own; a listen
 * stream holds no slot once acknowledged; `stateless: true` keeps the limit; `clientLimits: false`
 * removes it; bad values are refused at construction.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { InvalidOptionError } from '../../src/errors.js';
import { encodeHeaderValue } from '../../src/http/param-headers.js';
import {
  type CreateServer,
  createMcpHandler,
  type Served,
  type ServeOptions,
  serve,
  statelessSafe,
} from '../../src/server/index.js';
import { ACCEPT_BOTH, initializeBody, type Loose, open, type Reply, send, until } from '../helpers/http.js';
import { modernBody, modernHeaders, modernSend } from '../helpers/modern.js';

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

interface Limited {
  served: Served;
  url: string;
  /** Handlers waiting in `hold`, by gate name: call to let one answer. */
  held: Map<string, () => void>;
  /** Servers createServer built. */
  built(): number;
  stats(): Loose;
}

/** A server with a `hold` tool that answers only when the test opens its gate (or is cancelled). */
async function startLimited(options: Omit<ServeOptions, 'createServer'>, shared = false): Promise<Limited> {
  const held = new Map<string, () => void>();
  let built = 0;
  const createServer: CreateServer = () => {
    built++;
    const server = new McpServer({ name: 'limited', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.registerTool('hold', { inputSchema: { gate: z.string() } }, async ({ gate }, extra) => {
      await new Promise<void>((resolve, reject) => {
        held.set(gate, resolve);
        extra.signal.addEventListener(
          'abort',
          () => {
            held.delete(gate);
            reject(new Error('aborted'));
          },
          { once: true },
        );
      });
      held.delete(gate);
      return text(`released ${gate}`);
    });
    server.registerTool(
      'region',
      { inputSchema: { region: z.string().meta({ 'x-mcp-header': 'Region' }) } },
      async ({ region }) => text(region),
    );
    // An input request the client cannot answer: the transport answers 400/-32021.
    server.registerTool(
      'needs_sampling',
      {},
      async () =>
        ({
          resultType: 'input_required',
          inputRequests: {
            probe: {
              method: 'sampling/createMessage',
              params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 },
            },
          },
        }) as unknown as ReturnType<typeof text>,
    );
    return server as unknown as ReturnType<CreateServer>;
  };
  const served = await serve({
    createServer: shared ? statelessSafe(createServer) : createServer,
    port: 0,
    host: '127.0.0.1',
    keepaliveMs: 0,
    ...options,
  });
  after(() => served.close());
  return {
    served,
    url: served.url,
    held,
    built: () => built,
    stats: () => served.handler.stats().modern,
  };
}

function holdBody(gate: string, id: string | number = `h-${gate}`): Loose {
  return modernBody('tools/call', { name: 'hold', arguments: { gate } }, {}, id);
}

/** Starts a `hold` call and waits until its handler is running (so it certainly holds a slot). */
async function holding(
  s: Limited,
  gate: string,
  more: Record<string, string> = {},
  localAddress?: string,
): Promise<{ reply: Promise<Reply> }> {
  const reply = modernSend(s.url, holdBody(gate), more, {
    timeoutMs: 15_000,
    ...(localAddress === undefined ? {} : { localAddress }),
  });
  // A refusal or failure must end the test now, not after the wait below times out.
  let failed: unknown;
  reply.then(
    (r) => {
      if (r.status !== 200) failed = new Error(`hold ${gate}: ${r.status} ${r.text}`);
    },
    (e: unknown) => {
      failed = e;
    },
  );
  await until(() => s.held.has(gate) || failed !== undefined, 5_000, `hold ${gate} running`);
  if (failed !== undefined) throw failed;
  // Wrapped: an async function would otherwise wait for the answer itself.
  return { reply };
}

function release(s: Limited, gate: string): void {
  const open = s.held.get(gate);
  assert.ok(open !== undefined, `gate ${gate} is not held`);
  open();
}

function assertTooMany(r: Reply, id: unknown): void {
  assert.equal(r.status, 429, r.text);
  assert.equal(r.headers['retry-after'], '1');
  assert.match(String(r.headers['content-type']), /^application\/json/);
  const b = r.json();
  assert.equal(b.jsonrpc, '2.0');
  assert.deepEqual(b.id, id);
  assert.equal(b.error.code, -32000);
  assert.match(b.error.message, /maxConcurrentRequests/);
  assert.equal(r.headers['mcp-session-id'], undefined);
}

describe('modern era: per-client concurrency limit', () => {
  test('the request over the limit is 429 + Retry-After + JSON-RPC error with its id; an answer frees a slot', async () => {
    const s = await startLimited({ clientLimits: { maxConcurrentRequests: 2 } });
    const first = await holding(s, 'a');
    const second = await holding(s, 'b');
    assert.equal(s.stats().slotsHeld, 2);
    assert.equal(s.stats().clientsInflight, 1);
    const builtBefore = s.built();

    const third = await modernSend(s.url, holdBody('c', 'third'));
    assertTooMany(third, 'third');
    assert.equal(s.built(), builtBefore, 'no server is built for a refused request');
    assert.ok(!s.held.has('c'));
    assert.equal(s.stats().concurrencyRefusals, 1);
    assert.match(s.served.handler.metrics(), /sluice_modern_concurrency_refusals_total 1\n/);
    assert.match(s.served.handler.metrics(), /sluice_modern_clients_inflight 1\n/);

    release(s, 'a');
    const r1 = await first.reply;
    assert.equal(r1.status, 200, r1.text);
    assert.match(r1.text, /released a/);
    // The slot was given back when the answer was written, before the client read it.
    assert.equal(s.stats().slotsHeld, 1);
    const fourth = await holding(s, 'd');
    assert.equal(s.stats().slotsHeld, 2);

    release(s, 'b');
    release(s, 'd');
    assert.equal((await second.reply).status, 200);
    assert.equal((await fourth.reply).status, 200);
    assert.deepEqual([s.stats().slotsHeld, s.stats().clientsInflight, s.stats().inflight], [0, 0, 0]);
    assert.equal(s.stats().concurrencyRefusals, 1);
  });

  test('slots come back on cancellation (client closes) and on refusals late in a request: no leak', async () => {
    // Early heads (SSE after 10 ms), so the client can close a stream it has open.
    const s = await startLimited({ clientLimits: { maxConcurrentRequests: 2 }, streamAfterMs: 10 });
    for (let i = 0; i < 6; i++) {
      const gate = `cancel${i}`;
      const body = holdBody(gate);
      const r = await open(s.url, {
        method: 'POST',
        headers: modernHeaders(body),
        body: JSON.stringify(body),
      });
      await until(() => s.held.has(gate), 5_000, `${gate} running`);
      r.destroy();
      await until(() => !s.held.has(gate), 5_000, `${gate} aborted by the close`);
      await until(() => s.stats().slotsHeld === 0, 5_000, `${gate}'s slot back`);
    }
    assert.ok(s.stats().cancels >= 6);
    for (let i = 0; i < 4; i++) {
      // Refused by the transport after the slot was taken: Region header does not match (-32020).
      const mismatch = modernBody('tools/call', { name: 'region', arguments: { region: 'eu' } }, {}, `m${i}`);
      const r1 = await modernSend(s.url, mismatch, { 'mcp-param-region': encodeHeaderValue('us') });
      assert.equal(r1.status, 400, r1.text);
      assert.equal(r1.json().error.code, -32020);
      // An input_required result the client cannot answer (-32021).
      const gated = modernSend(s.url, modernBody('tools/call', { name: 'needs_sampling' }, {}, `g${i}`));
      // The server has no prompts: the served server answers -32601, which is HTTP 404.
      const missing = modernSend(s.url, modernBody('prompts/list', {}, {}, `p${i}`));
      const [r2, r3] = await Promise.all([gated, missing]);
      assert.equal(r2.status, 400, r2.text);
      assert.equal(r2.json().error.code, -32021);
      assert.equal(r3.status, 404, r3.text);
      assert.equal(r3.json().error.code, -32601);
    }
    assert.deepEqual([s.stats().slotsHeld, s.stats().clientsInflight], [0, 0]);
    assert.equal(s.stats().concurrencyRefusals, 0, 'nothing leaked, so nothing was refused');
    // And the full limit is still there to take.
    const a = await holding(s, 'after-a');
    const b = await holding(s, 'after-b');
    assertTooMany(await modernSend(s.url, holdBody('after-c', 'over')), 'over');
    release(s, 'after-a');
    release(s, 'after-b');
    await Promise.all([a.reply, b.reply]);
  });

  test('close() abandons the calls in flight (503) and their slots come back', async () => {
    const s = await startLimited({ clientLimits: { maxConcurrentRequests: 2 } });
    const a = await holding(s, 'close-a');
    const b = await holding(s, 'close-b');
    assert.equal(s.stats().slotsHeld, 2);
    await s.served.close();
    const answers = await Promise.all([a.reply, b.reply]);
    assert.deepEqual(
      answers.map((r) => r.status),
      [503, 503],
    );
    // Their handlers were running: the answer says they may have run and invites no retry.
    for (const r of answers) {
      assert.equal(r.headers['retry-after'], undefined);
      assert.equal(r.json().error.data.reason, 'request-cut');
    }
    assert.deepEqual([s.stats().slotsHeld, s.stats().clientsInflight], [0, 0]);
  });

  test('statelessSafe (one server per principal): the same limit, slots back on answer and cancel', async () => {
    const s = await startLimited({ clientLimits: { maxConcurrentRequests: 1 }, streamAfterMs: 10 }, true);
    const a = await holding(s, 'shared-a');
    assertTooMany(await modernSend(s.url, holdBody('shared-b', 'sb')), 'sb');
    release(s, 'shared-a');
    assert.equal((await a.reply).status, 200);
    assert.equal(s.stats().slotsHeld, 0);
    const body = holdBody('shared-c');
    const r = await open(s.url, { method: 'POST', headers: modernHeaders(body), body: JSON.stringify(body) });
    await until(() => s.held.has('shared-c'), 5_000, 'shared-c running');
    r.destroy();
    await until(() => s.stats().slotsHeld === 0, 5_000, "shared-c's slot back after the close");
    const d = await holding(s, 'shared-d');
    release(s, 'shared-d');
    assert.equal((await d.reply).status, 200);
    assert.equal(s.built(), 1, 'one shared server served every call');
  });

  test('a createServer that throws: the request is answered 500 and its slot comes back', async () => {
    const served = await serve({
      createServer: () => {
        throw new Error('no server today');
      },
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      clientLimits: { maxConcurrentRequests: 1 },
      logger: { info() {}, warn() {}, error() {} },
    });
    after(() => served.close());
    for (let i = 0; i < 3; i++) {
      const r = await modernSend(served.url, holdBody(`throws${i}`, `t${i}`));
      assert.equal(r.status, 500, r.text);
    }
    assert.equal(served.handler.stats().modern.slotsHeld, 0);
    assert.equal(served.handler.stats().modern.concurrencyRefusals, 0);
  });

  test('each principal has its own limit', async () => {
    const s = await startLimited({
      clientLimits: { maxConcurrentRequests: 1 },
      authenticate: (req) => {
        const h = String(req.headers['authorization'] ?? '');
        if (h === 'Bearer alice-token-1') return { principal: 'alice' };
        if (h === 'Bearer bob-token-22') return { principal: 'bob' };
        return null;
      },
    });
    const alice = { authorization: 'Bearer alice-token-1' };
    const bob = { authorization: 'Bearer bob-token-22' };
    const a = await holding(s, 'alice1', alice);
    assertTooMany(await modernSend(s.url, holdBody('alice2', 'a2'), alice), 'a2');
    const b = await holding(s, 'bob1', bob);
    assertTooMany(await modernSend(s.url, holdBody('bob2', 'b2'), bob), 'b2');
    assert.equal(s.stats().clientsInflight, 2);
    release(s, 'alice1');
    release(s, 'bob1');
    await Promise.all([a.reply, b.reply]);
    assert.equal(s.stats().concurrencyRefusals, 2);
  });

  test('without authentication a client is its address', async () => {
    const s = await startLimited({ clientLimits: { maxConcurrentRequests: 1 } });
    const one = await holding(s, 'one', {}, '127.0.0.1');
    const over = await modernSend(s.url, holdBody('one-more', 'x1'), {}, { localAddress: '127.0.0.1' });
    assertTooMany(over, 'x1');
    const two = await holding(s, 'two', {}, '127.0.0.2');
    assert.equal(s.stats().clientsInflight, 2);
    release(s, 'one');
    release(s, 'two');
    await Promise.all([one.reply, two.reply]);
  });

  test('a listen stream holds no slot once acknowledged', async () => {
    const s = await startLimited({ clientLimits: { maxConcurrentRequests: 1 } });
    const listens: Reply[] = [];
    for (let i = 0; i < 3; i++) {
      const body = modernBody(
        'subscriptions/listen',
        { notifications: { toolsListChanged: true } },
        {},
        `L${i}`,
      );
      const r = await open(s.url, {
        method: 'POST',
        headers: modernHeaders(body),
        body: JSON.stringify(body),
      });
      assert.equal(r.status, 200, r.text);
      await r.waitFor((x) => x.messages().length >= 1, 5_000, `listen ${i} acknowledged`);
      listens.push(r);
    }
    assert.equal(s.stats().listenStreams, 3);
    assert.equal(s.stats().slotsHeld, 0);
    // With three listen streams open, the one slot is free for a call, and only one.
    const call = await holding(s, 'beside-listen');
    assertTooMany(await modernSend(s.url, holdBody('second', 'y1')), 'y1');
    release(s, 'beside-listen');
    assert.equal((await call.reply).status, 200);
    for (const r of listens) r.destroy();
    await until(() => s.stats().listenStreams === 0, 5_000, 'listen streams closed');
    assert.equal(s.stats().slotsHeld, 0);
  });

  test('stateless: true keeps the modern limit (the legacy session limits stay off there)', async () => {
    const s = await startLimited({
      stateless: true,
      clientLimits: { maxConcurrentRequests: 1, initializeBurst: 1, initializePerSecond: 0.001 },
    });
    const a = await holding(s, 'sl');
    assertTooMany(await modernSend(s.url, holdBody('sl2', 'z1')), 'z1');
    release(s, 'sl');
    assert.equal((await a.reply).status, 200);
    // Legacy stateless initializes are not limited per client (unchanged): with a bucket of one
    // token refilling once in 1000 s, the second would be 429 if they were.
    for (let i = 0; i < 3; i++) {
      const init = await send(s.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
        body: JSON.stringify(initializeBody()),
      });
      assert.equal(init.status, 200, init.text);
    }
  });

  test('clientLimits: false: no limit', async () => {
    const s = await startLimited({ clientLimits: false });
    // One more than the default limit (128), all in flight at once from one address.
    const n = 129;
    const replies = Array.from({ length: n }, (_, i) =>
      modernSend(s.url, holdBody(`free${i}`), {}, { timeoutMs: 30_000 }),
    );
    await until(() => s.held.size === n, 20_000, `${n} calls running`);
    assert.equal(s.stats().concurrencyRefusals, 0);
    assert.equal(s.stats().slotsHeld, 0, 'nothing is counted when the limit is off');
    for (const open of [...s.held.values()]) open();
    const answers = await Promise.all(replies);
    assert.ok(answers.every((r) => r.status === 200));
  });

  test('bad values throw InvalidOptionError at construction', async () => {
    const createServer: CreateServer = () => {
      throw new Error('never called');
    };
    for (const bad of [0, -3, 2.5, Number.NaN]) {
      assert.throws(
        () => createMcpHandler({ createServer, clientLimits: { maxConcurrentRequests: bad } }),
        (e: unknown) => e instanceof InvalidOptionError && /maxConcurrentRequests/.test(e.message),
        String(bad),
      );
    }
    const ok = createMcpHandler({ createServer, clientLimits: { maxConcurrentRequests: 7 } });
    assert.equal(ok.stats().modern.slotsHeld, 0);
    await ok.close();
  });
});
