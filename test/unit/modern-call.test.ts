/**
 * One 2026-07-28 request (core/era-2026/call.ts) served by a real SDK server from a small core
 * context and a fake sink, no HTTP server: a JSON answer; upgraded to SSE by its first progress
 * notification; policy json (related messages undeliverable); the client closing its response
 * cancels the handler; and a blocked socket slows the tool (wait-for-room) instead of closing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreContext } from '../../src/core/context.js';
import { ModernCall } from '../../src/core/era-2026/call.js';
import { ModernEra } from '../../src/core/era-2026/era.js';
import { resolveOptions, type ServerOptions } from '../../src/core/options.js';
import type { Policy, PostInput } from '../../src/core/pipeline/route.js';
import type { JsonRpcRequest } from '../../src/jsonrpc/message.js';
import type { ModernMeta } from '../../src/modern/validate.js';
import { FakeSink, nextTick } from '../helpers/fake-sink.js';
import { buildModernServer, type ModernProbe } from '../helpers/modern.js';

const meta: ModernMeta = {
  protocolVersion: '2026-07-28',
  clientCapabilities: {},
  clientInfo: { name: 'unit', version: '1.0.0' },
  logLevel: undefined,
};

function era(options: ServerOptions = {}): { era: ModernEra; probe: ModernProbe; core: CoreContext } {
  const probe: ModernProbe = { aborted: [], sendsAfterAbort: 0, servers: 0, eras: [], askErrors: [] };
  const core = new CoreContext(
    () => buildModernServer(probe),
    resolveOptions({ keepaliveMs: 0, ...options }),
    undefined,
  );
  return { era: new ModernEra(core), probe, core };
}

function call(
  e: ModernEra,
  sink: FakeSink,
  policy: Policy,
  id: number,
  name: string,
  args: Record<string, unknown>,
  token?: string,
  logLevel?: string,
): ModernCall {
  const req: JsonRpcRequest = {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, _meta: token === undefined ? {} : { progressToken: token } },
  };
  const input: PostInput = {
    head: { method: 'POST', header: () => undefined },
    rawHeaders: {},
    body: JSON.stringify(req),
    accept: { json: true, sse: true },
    auth: undefined,
    sink,
    headers: {},
  };
  return new ModernCall(e, input, req, { ...meta, logLevel }, policy);
}

async function until(cond: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

const methodsOrIds = (sink: FakeSink): unknown[] => sink.messages().map((m) => m['method'] ?? m['id']);

test('a response with nothing related first is a JSON answer', async () => {
  const { era: e } = era();
  const sink = new FakeSink();
  const c = call(e, sink, 'auto', 1, 'echo', { text: 'hi' });
  await c.run();
  await until(() => sink.ended, 'the answer');
  assert.equal(sink.status, 200);
  assert.equal(sink.headers?.['content-type'], 'application/json');
  const body = JSON.parse(sink.body) as { id: number; result: { content: { text: string }[] } };
  assert.equal(body.id, 1);
  assert.equal(body.result.content[0]?.text, 'hi');
  assert.equal(c.done, true);
  assert.equal(e.state.inflightCount, 0);
});

test('the first progress notification upgrades to SSE; the response ends the stream', async () => {
  const { era: e, core } = era();
  const sink = new FakeSink();
  await call(e, sink, 'auto', 2, 'tick', { n: 3, everyMs: 1 }, 'tok').run();
  await until(() => sink.ended, 'the streamed answer');
  assert.match(sink.headers?.['content-type'] ?? '', /text\/event-stream/);
  assert.deepEqual(methodsOrIds(sink), [
    'notifications/progress',
    'notifications/progress',
    'notifications/progress',
    2,
  ]);
  assert.deepEqual(sink.ids(), [], 'no event ids in this era');
  assert.equal(core.live.size, 0, 'the finished connection left the live set');
  assert.equal(core.counters.get('responsesSse'), 1);
});

test('policy json: progress has no stream to go to; the answer is JSON', async () => {
  const { era: e, core } = era();
  const sink = new FakeSink();
  await call(e, sink, 'json', 3, 'tick', { n: 2, everyMs: 1 }, 'tok').run();
  await until(() => sink.ended, 'the answer');
  assert.equal(sink.headers?.['content-type'], 'application/json');
  assert.equal(core.counters.get('undeliverable'), 2);
});

test('the client closing its response cancels the handler (the era has no resume)', async () => {
  const { era: e, probe, core } = era();
  const sink = new FakeSink();
  const c = call(e, sink, 'auto', 4, 'tick', { n: 1000, everyMs: 5 }, 'tok');
  await c.run();
  await until(() => sink.messages().length >= 2, 'two progress notifications');
  assert.equal(core.live.size, 1);
  sink.peerClose();
  assert.equal(c.done, true);
  await until(() => probe.aborted.includes('tick'), 'the handler aborted');
  assert.equal(e.state.counts.get('cancels'), 1);
  assert.equal(core.live.size, 0);
  assert.equal(e.state.inflightCount, 0);
});

test('a blocked socket slows the tool (wait-for-room): nothing closed, nothing lost, in order', async () => {
  // A second 600-byte frame does not fit in the queue: without waiting for room it would overflow.
  const { era: e, core } = era({ highWaterMark: 1024, maxQueueBytes: 1200 });
  const sink = new FakeSink();
  // More than one batch (64 KiB): the first batch write meets the blocked socket.
  const n = 200;
  // A reader that takes nothing: every write is refused from the first one.
  sink.blocked = true;
  // Log messages at the asked level: related and not coalescible, so their producer must wait.
  await call(e, sink, 'auto', 5, 'flood', { n, pad: 600 }, undefined, 'info').run();
  await until(() => sink.writes >= 1, 'the first (refused) write');
  await new Promise((r) => setTimeout(r, 100));
  const before = sink.messages().length;
  assert.ok(before < n / 2, `the tool is held back (${before} of ${n} out)`);
  assert.equal(sink.ended, false, `the tool waits for room: ${sink.body.slice(-300)}`);
  assert.equal(core.counters.get('overflowCloses'), 0);
  for (let i = 0; i < 200 && !sink.ended; i++) {
    sink.drain();
    await nextTick();
    sink.blocked = true;
    await new Promise((r) => setTimeout(r, 1));
  }
  sink.drain();
  await until(() => sink.ended, 'the answer after the reader caught up');
  assert.equal(sink.destroyed, false);
  assert.equal(core.counters.get('overflowCloses'), 0);
  const got = sink.messages();
  const logs = got.filter((m) => m['method'] === 'notifications/message');
  assert.deepEqual(
    logs.map((m) => Number(String((m['params'] as { data: string }).data).split(':')[0])),
    Array.from({ length: n }, (_, i) => i + 1),
  );
  assert.equal(got.at(-1)?.['id'], 5);
});
