/**
 * The response a task's tool answers into (tasks/capture-sink.ts) and what its answer means for the
 * task (run.ts settlementOf): a JSON answer, an SSE answer after progress (each progress message
 * reported, any number of them, since only one event at a time is bounded), an oversized event,
 * an abort; tool errors stay completed, JSON-RPC errors fail, input_required keeps its requests.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { CaptureSink } from '../../src/tasks/capture-sink.js';
import { MemoryTaskStore } from '../../src/tasks/memory-store.js';
import { newTaskId, type TaskRecord } from '../../src/tasks/model.js';
import { resolveTaskOptions } from '../../src/tasks/options.js';
import { settlementOf, TaskRun } from '../../src/tasks/run.js';

const frame = (m: unknown) => `data: ${JSON.stringify(m)}\n\n`;

describe('CaptureSink', () => {
  test('a JSON answer', async () => {
    const s = new CaptureSink(1000, () => undefined);
    s.respond(200, {}, JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [] } }));
    const c = await s.done;
    assert.equal(c.kind, 'response');
    assert.equal(s.closed, true);
  });

  test("relay: the client's own progress, its partial output and log messages, until turned off", () => {
    const progress: unknown[] = [];
    const events: unknown[] = [];
    const s = new CaptureSink(10_000, () => undefined);
    const note = (token: unknown, progress: number, meta?: Record<string, unknown>) =>
      frame({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: token, progress, ...(meta === undefined ? {} : { _meta: meta }) },
      });
    const relay = {
      token: 0,
      progress: (json: string) => progress.push(JSON.parse(json).params.progress),
      event: (json: string) => {
        const m = JSON.parse(json);
        events.push(m.params.data ?? m.params.progress ?? m.params.seq);
        return undefined;
      },
    };
    s.relay(relay);
    s.head(200);
    s.write(note(0, 1));
    s.write(note('0', 2)); // another token (a string, not the number the client sent)
    s.write(note('sluice-task:x', 3)); // the task's own token
    s.write(note(0, 4, { 'io.sluice/partial': { seq: 0, n: 1 } })); // partial output for the client
    s.write(note('sluice-task:x', 40, { 'io.sluice/partial': { seq: 1, n: 1 } })); // … for the task only
    s.write(
      frame({
        jsonrpc: '2.0',
        method: 'notifications/tools/partial_result',
        params: {
          partialResultToken: 'p',
          seq: 7,
          content: [],
          _meta: { 'io.sluice/partial': { seq: 7, n: 1 } },
        },
      }),
    );
    s.write(frame({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }));
    s.write(note(0, 5));
    s.relay(undefined);
    s.write(note(0, 6));
    s.write(frame({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'y' } }));
    s.relay({ ...relay, token: undefined });
    s.write(note(0, 7)); // no token of the client's: no progress
    s.write(frame({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'z' } }));
    assert.deepEqual(progress, [1, 5]);
    assert.deepEqual(events, [4, 7, 'x', 'z']);
  });

  test("while the relay's response is full, write says so; its room (or turning it off) is the drain", async () => {
    const s = new CaptureSink(10_000, () => undefined);
    let drains = 0;
    s.onDrain(() => drains++);
    const rooms: (() => void)[] = [];
    const relay = {
      token: undefined,
      progress: () => undefined,
      event: () => new Promise<void>((resolve) => rooms.push(resolve)),
    };
    const log = frame({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: 'x' },
    });
    assert.equal(s.write(log), true, 'no relay: never full');
    s.relay(relay);
    assert.equal(s.write(log), false);
    assert.equal(s.write(log), false, 'still waiting');
    rooms[0]?.();
    await Promise.resolve();
    await Promise.resolve();
    assert.equal(drains, 0, 'an older wait is not the drain');
    rooms[1]?.();
    await new Promise((r) => setImmediate(r));
    assert.equal(drains, 1);
    assert.equal(
      s.write(
        frame({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: 1, progress: 1 },
        }),
      ),
      true,
    );
    assert.equal(s.write(log), false);
    s.relay(undefined);
    await new Promise((r) => setImmediate(r));
    assert.equal(drains, 2, 'turning the relay off lets the tool go on');
    assert.equal(s.write(log), true);
  });

  test('SSE: progress reported, then the answer; the run may exceed the bound, one event may not', async () => {
    const seen: string[] = [];
    const s = new CaptureSink(300, (m) => seen.push(m));
    s.head(200);
    for (let i = 0; i < 100; i++) {
      const p = {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 1, progress: i, total: 100 },
      };
      // Split across writes, as a socket would.
      const f = frame(p);
      s.write(f.slice(0, 10));
      s.write(f.slice(10));
    }
    s.write(frame({ jsonrpc: '2.0', id: 'x', result: { content: [{ type: 'text', text: 'ok' }] } }));
    const c = await s.done;
    assert.equal(c.kind, 'response');
    assert.equal(seen.length, 100);
    assert.equal(seen[99], '99/100');
    const big = new CaptureSink(300, () => undefined);
    big.write(`data: ${'x'.repeat(400)}`);
    assert.equal((await big.done).kind, 'too-large');
  });

  test('abort closes it and tells the call (after the current write returned)', async () => {
    const s = new CaptureSink(1000, () => undefined);
    let closed = false;
    s.onClose(() => {
      closed = true;
    });
    s.abort();
    assert.equal(closed, false, 'deferred');
    assert.equal((await s.done).kind, 'aborted');
    await new Promise((r) => setImmediate(r));
    assert.equal(closed, true);
  });
});

describe('settlementOf', () => {
  const response = (message: Record<string, unknown>) => ({ kind: 'response' as const, message });
  test('results, tool errors, JSON-RPC errors, input_required, oversized', () => {
    assert.deepEqual(settlementOf(response({ id: 1, result: { content: [], isError: true } }), 100), {
      status: 'completed',
      result: '{"content":[],"isError":true}',
    });
    assert.deepEqual(settlementOf(response({ id: 1, error: { code: -32021, message: 'm', data: 1 } }), 100), {
      status: 'failed',
      error: { code: -32021, message: 'm', data: 1 },
    });
    const ir = settlementOf(
      response({
        id: 1,
        result: { resultType: 'input_required', inputRequests: { a: { method: 'x' } }, requestState: 's' },
      }),
      100,
    );
    assert.deepEqual(ir, {
      status: 'input_required',
      inputRequests: { a: '{"method":"x"}' },
      requestState: 's',
    });
    assert.equal(settlementOf(response({ id: 1, result: { text: 'x'.repeat(200) } }), 100)?.status, 'failed');
    assert.equal(settlementOf({ kind: 'aborted' }, 100), undefined);
    assert.equal(settlementOf({ kind: 'malformed', status: 500 }, 100)?.status, 'failed');
  });
});

describe('CaptureSink with the request id: the result cut from the answer', () => {
  const settle = (body: string, id?: string): unknown => {
    const sink = new CaptureSink(
      1 << 20,
      () => undefined,
      () => undefined,
      id,
    );
    sink.respond(200, {}, body);
    return sink.done.then((c) => ({ kind: c.kind, s: settlementOf(c, 1 << 20) }));
  };
  test('settles exactly as parsing would, for any result, error or key order', async () => {
    const id = 'sluice-task:abc';
    const result = fc.oneof(
      fc.dictionary(fc.string(), fc.jsonValue()),
      fc.record({
        resultType: fc.constant('input_required'),
        inputRequests: fc.dictionary(fc.string(), fc.jsonValue()),
      }),
      fc.record({ nested: fc.constant({ resultType: 'input_required' }), content: fc.array(fc.jsonValue()) }),
    );
    const body = fc.oneof(
      result.map((r) => JSON.stringify({ jsonrpc: '2.0', id, result: r })),
      result.map((r) => JSON.stringify({ result: r, jsonrpc: '2.0', id })),
      fc
        .record({ code: fc.integer(), message: fc.string() })
        .map((e) => JSON.stringify({ jsonrpc: '2.0', id, error: e })),
      result.map((r) => JSON.stringify({ jsonrpc: '2.0', id: 'other', result: r })),
    );
    let cut = 0;
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const fast = (await settle(b, id)) as { kind: string; s: unknown };
        const parsed = (await settle(b)) as { kind: string; s: unknown };
        if (fast.kind === 'result') cut++;
        assert.deepEqual(fast.s, parsed.s);
      }),
      { numRuns: 1000 },
    );
    // One body shape in four and one result shape in three take the cut (about 1 in 12).
    assert.ok(cut > 30, `the cut path was taken (${cut} of 1000)`);
  });

  test('an input_required result, even one whose text only looks like it, is read in full', async () => {
    const id = 'sluice-task:x';
    const ir = { resultType: 'input_required', inputRequests: { a: { method: 'elicitation/create' } } };
    const r = (await settle(JSON.stringify({ jsonrpc: '2.0', id, result: ir }), id)) as {
      kind: string;
      s: { status: string };
    };
    assert.equal(r.kind, 'response');
    assert.equal(r.s.status, 'input_required');
    const big = (await (async () => {
      const sink = new CaptureSink(
        1 << 20,
        () => undefined,
        () => undefined,
        id,
      );
      sink.respond(200, {}, JSON.stringify({ jsonrpc: '2.0', id, result: { text: 'x'.repeat(100) } }));
      return settlementOf(await sink.done, 50);
    })()) as { status: string };
    assert.equal(big.status, 'failed', 'the result bound applies to the cut text');
  });
});

describe('TaskRun', () => {
  test('an outcome is stored even when the store fails for a while (retried within a lease)', async () => {
    const store = new MemoryTaskStore();
    let failures = 2;
    const settle = async (...args: Parameters<MemoryTaskStore['settle']>) => {
      if (failures-- > 0) throw new Error('store unreachable');
      return store.settle(...args);
    };
    // The store itself for everything else (its methods bound to it: they use private fields).
    const flaky = new Proxy(store, {
      get(target, prop) {
        if (prop === 'settle') return settle;
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const o = resolveTaskOptions({ store: flaky, leaseMs: 2000 });
    const now = Date.now();
    const t: TaskRecord = {
      taskId: newTaskId(),
      owner: 'anon',
      client: 'c',
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: 60_000,
      pollIntervalMs: 100,
      call: JSON.stringify({ name: 'x' }),
      leaseOwner: 'me',
      leaseUntil: now + 2000,
    };
    assert.equal(await store.create(t, 10), 'created');
    const run = new TaskRun(o, 'me', t.taskId);
    await run.run(t, async (req, sink) => {
      sink.respond(200, {}, JSON.stringify({ jsonrpc: '2.0', id: req.id, result: { content: [] } }));
    });
    assert.equal(failures, -1, 'two failures, then the store took it');
    assert.equal((await store.get(t.taskId, 'anon'))?.status, 'completed');
  });
});
