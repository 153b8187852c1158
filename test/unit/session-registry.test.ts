/**
 * The session registry (core/era-2025/sessions.ts) on its own, built from a small core context
 * instead of a whole endpoint: lookups enforce id, principal and protocol version; session slots
 * held by initializations count against maxSessions; a session that ends leaves the registry,
 * gives its client's slot back and is reported once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreContext } from '../../src/core/context.js';
import { Session } from '../../src/core/era-2025/session.js';
import { Sessions } from '../../src/core/era-2025/sessions.js';
import { resolveOptions, type ServerOptions, type SessionInfo } from '../../src/core/options.js';
import { Refusals } from '../../src/core/pipeline/refusal.js';
import type { RequestHead } from '../../src/core/pipeline/sink.js';
import type { CreateServer } from '../../src/core/sdk/server-like.js';

const noServer: CreateServer = () => {
  throw new Error('no server in these tests');
};

function registry(options: ServerOptions = {}): {
  reg: Sessions;
  ended: (SessionInfo & { reason: string })[];
} {
  const ended: (SessionInfo & { reason: string })[] = [];
  const o = resolveOptions({ ...options, onSessionEnd: (info) => ended.push(info) });
  const reg = new Sessions(new CoreContext(noServer, o, undefined));
  return { reg, ended };
}

function head(headers: Record<string, string>): RequestHead {
  return { method: 'POST', header: (name) => headers[name] };
}

function started(reg: Sessions, id: string, principal?: string, clientKey?: string): Session {
  const s = new Session(reg.deps, id, `tag-${id}`, principal);
  s.negotiated('2025-11-25');
  reg.register(s, clientKey);
  return s;
}

test('lookup: no id is 400, an unknown id or another principal is 404, a bad version is 400', () => {
  const { reg } = registry();
  const s = started(reg, 'a', 'alice');
  assert.deepEqual(reg.lookup(head({}), { principal: 'alice' }), Refusals.missingSession());
  assert.deepEqual(
    reg.lookup(head({ 'mcp-session-id': 'b' }), { principal: 'alice' }),
    Refusals.sessionNotFound(),
  );
  // Another principal's session is indistinguishable from an unknown one.
  assert.deepEqual(
    reg.lookup(head({ 'mcp-session-id': 'a' }), { principal: 'bob' }),
    Refusals.sessionNotFound(),
  );
  assert.deepEqual(reg.lookup(head({ 'mcp-session-id': 'a' }), undefined), Refusals.sessionNotFound());
  const bad = reg.lookup(head({ 'mcp-session-id': 'a', 'mcp-protocol-version': '1999-01-01' }), {
    principal: 'alice',
  });
  assert.ok(!(bad instanceof Session));
  assert.equal(bad.status, 400);
  assert.equal(reg.lookup(head({ 'mcp-session-id': 'a' }), { principal: 'alice' }), s);
  reg.endAll(Refusals.requestCut());
});

test('an overlong id is not looked up', () => {
  const { reg } = registry();
  const long = 'x'.repeat(129);
  started(reg, long);
  assert.deepEqual(reg.lookup(head({ 'mcp-session-id': long }), undefined), Refusals.sessionNotFound());
  reg.endAll(Refusals.requestCut());
});

test('initializations under way hold slots against maxSessions; a release counts once', () => {
  const { reg } = registry({ maxSessions: 2 });
  const r1 = reg.holdSlot();
  started(reg, 'a');
  assert.equal(reg.slotFree, false, 'one registered + one initializing = the cap');
  r1();
  r1();
  assert.equal(reg.slotFree, true, 'released once, however often called');
  reg.endAll(Refusals.requestCut());
});

test('a session that ends leaves the registry, is reported once, and frees its client slot', () => {
  const { reg, ended } = registry({ clientLimits: { maxSessions: 1 } });
  const limits = reg.clientLimits;
  assert.ok(limits !== undefined);
  const key = 'principal:alice';
  const admitted = limits.admit(key, Date.now());
  assert.ok('settle' in admitted);
  admitted.settle(true);
  const s = started(reg, 'a', 'alice', key);
  assert.equal(reg.size, 1);
  assert.ok(!('settle' in limits.admit(key, Date.now())), 'the client holds its one session');
  s.end('delete');
  s.end('delete');
  assert.equal(reg.has('a'), false);
  assert.deepEqual(
    ended.map((e) => [e.sessionId, e.reason]),
    [['a', 'delete']],
  );
  assert.equal(reg.stats(reg.census(false)).ended.delete, 1);
  assert.ok('settle' in limits.admit(key, Date.now()), 'the slot came back');
  reg.endAll(Refusals.requestCut());
});

test('endAll ends every session with the shutdown reason and reports how many there were', () => {
  const { reg, ended } = registry();
  started(reg, 'a');
  started(reg, 'b');
  assert.equal(reg.endAll(Refusals.requestCut()), 2);
  assert.equal(reg.size, 0);
  assert.deepEqual(ended.map((e) => e.reason).sort(), ['shutdown', 'shutdown']);
  assert.equal(reg.inflightCount(), 0);
});
