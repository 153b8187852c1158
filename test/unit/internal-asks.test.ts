/**
 * Sluice's own asks to a served 2026-07-28 server (core/era-2026/internal-asks.ts) have a deadline:
 * a server that never answers its tools/list must not hold a tools/call (or a task's run, which has
 * no client to close it) forever. The declarations then read as `unanswered` and are not cached, so
 * the call is answered with an error (own-answers.ts) and a later call asks again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InternalAsks } from '../../src/core/era-2026/internal-asks.js';
import { toolHeaderDecls } from '../../src/core/era-2026/introspect.js';
import { ModernState } from '../../src/core/era-2026/state.js';
import { withDeadline } from '../helpers/deadline.js';

test('an ask not answered within its deadline resolves undefined; a late answer is dropped', async () => {
  const asks = new InternalAsks();
  const { id, answer } = asks.open(30);
  // The ask's timer does not hold a process open (a server's sockets do); this test's must.
  const alive = setTimeout(() => {}, 5_000);
  assert.equal(await withDeadline(answer, 5_000, 'the deadline'), undefined);
  clearTimeout(alive);
  assert.equal(asks.settle({ jsonrpc: '2.0', id, result: {} }), false, 'late: answers no ask');
  assert.deepEqual([...asks.ids()], []);
});

test('an ask answered in time gets its answer; clear() ends the others', async () => {
  const asks = new InternalAsks();
  const a = asks.open(5_000);
  const b = asks.open(5_000);
  assert.equal(asks.settle({ jsonrpc: '2.0', id: a.id, result: { ok: 1 } }), true);
  assert.deepEqual(await a.answer, { jsonrpc: '2.0', id: a.id, result: { ok: 1 } });
  asks.clear();
  assert.equal(await withDeadline(b.answer, 1_000, 'cleared'), undefined);
});

test('tools/list unanswered: the declarations are unknown (not empty) and nothing is cached', async () => {
  const state = new ModernState();
  let asked = 0;
  const never = async () => {
    asked++;
    return undefined;
  };
  const r = await toolHeaderDecls(
    never,
    state,
    'p',
    () => 0,
    () => false,
  );
  assert.equal(r, 'unanswered');
  assert.equal(state.decls('p', 0), undefined, 'not cached');
  // An answered list is cached as it is.
  const listed = async () => ({
    jsonrpc: '2.0' as const,
    id: 'x',
    result: {
      tools: [
        {
          name: 'pay',
          inputSchema: { type: 'object', properties: { to: { type: 'string', 'x-mcp-header': 'To' } } },
        },
      ],
    },
  });
  const ok = await toolHeaderDecls(
    listed,
    state,
    'p',
    () => 0,
    () => false,
  );
  assert.ok(ok instanceof Map && ok.has('pay'));
  assert.ok(state.decls('p', 0)?.has('pay'));
  assert.equal(asked, 1);
});
