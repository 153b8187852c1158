// plainAnswer (src/tasks/task-after.ts): a held call's captured answer given to the client as its own,
// under its request id; an answer that could not be kept is the error its task would have failed with.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TaskOffer } from '../../src/core/era-2026/task-hook.js';
import { plainAnswer } from '../../src/tasks/task-after.js';

const offer = { req: { jsonrpc: '2.0', id: 7, method: 'tools/call' } } as unknown as TaskOffer;

test('a result and a response keep their status and take the request id', () => {
  assert.deepEqual(plainAnswer(offer, { kind: 'result', text: '{"content":[]}' }, 200, 100), {
    status: 200,
    body: '{"jsonrpc":"2.0","id":7,"result":{"content":[]}}',
  });
  const message = { jsonrpc: '2.0', id: 'sluice-task:x', error: { code: -32020, message: 'mismatch' } };
  assert.deepEqual(plainAnswer(offer, { kind: 'response', message }, 400, 100), {
    status: 400,
    body: { ...message, id: 7 },
  });
});

test('too large, unreadable, or no answer: 500 with the error the task would have failed with', () => {
  const error = (c: Parameters<typeof plainAnswer>[1]) =>
    plainAnswer(offer, c, 200, 100).body as { id: number; error: { code: number; message: string } };
  assert.equal(plainAnswer(offer, { kind: 'too-large' }, 200, 100).status, 500);
  assert.deepEqual(error({ kind: 'too-large' }).error, {
    code: -32603,
    message: "Internal error: the task's result exceeds 100 bytes",
  });
  assert.match(error({ kind: 'malformed', status: 502 }).error.message, /could not be read \(HTTP 502\)/);
  assert.match(error({ kind: 'aborted' }).error.message, /ended without an answer/);
  assert.equal(error({ kind: 'aborted' }).id, 7);
});
