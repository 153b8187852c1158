/**
 * A round's `tools/call` (tasks/run.ts `roundRequest`): the SEP-1686 `task` hint is left out
 * (SEP-2663: tolerated, ignored; not the tool's business), every other key of the call is kept as
 * an own data key (a `__proto__` key parsed from JSON included), the caller's object is never
 * changed, and a call without a progress token gets the task's own.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { newWorkingTask, ownProgressToken } from '../../src/tasks/model.js';
import { roundRequest } from '../../src/tasks/run.js';

function task(call: string) {
  return newWorkingTask({
    owner: 'anon',
    client: 'c',
    ttlMs: 60_000,
    pollIntervalMs: 100,
    call,
    runner: 'r',
    leaseMs: 10_000,
    now: 1_700_000_000_000,
  });
}

describe('roundRequest', () => {
  test('the task hint is left out; the rest kept; the caller object untouched', () => {
    const call = { name: 'echo', arguments: { text: 'hi' }, task: { ttl: 5 }, _meta: { progressToken: 7 } };
    const before = structuredClone(call);
    const r = roundRequest(task(JSON.stringify(call)), call);
    assert.deepEqual(r.params, { name: 'echo', arguments: { text: 'hi' }, _meta: { progressToken: 7 } });
    assert.deepEqual(call, before);
    // From the stored text (a later round) it is the same.
    assert.deepEqual(roundRequest(task(JSON.stringify(call))).params, r.params);
  });

  test('a __proto__ key from JSON stays an own key and never becomes the prototype', () => {
    const text = '{"name":"echo","__proto__":{"polluted":true},"task":{}}';
    const r = roundRequest(task(text));
    const params = r.params as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(params), Object.prototype);
    assert.ok(Object.hasOwn(params, '__proto__'));
    assert.equal((params as { polluted?: unknown }).polluted, undefined);
    assert.equal(Object.hasOwn(params, 'task'), false);
  });

  test('any call: every key but task kept, and a progress token present', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue(), { maxKeys: 6 }),
        fc.boolean(),
        (extra, withTask) => {
          const call: Record<string, unknown> = { ...extra, name: 'echo' };
          if (withTask) call['task'] = { ttl: 1 };
          const t = task(JSON.stringify(call));
          const params = roundRequest(t, call).params as Record<string, unknown>;
          assert.equal(Object.hasOwn(params, 'task'), false);
          for (const k of Object.keys(call)) {
            if (k === 'task' || k === '_meta') continue;
            assert.deepEqual(params[k], call[k]);
          }
          const meta = params['_meta'] as Record<string, unknown>;
          const given = (call['_meta'] as Record<string, unknown> | undefined)?.['progressToken'];
          const wasObject =
            typeof call['_meta'] === 'object' && call['_meta'] !== null && !Array.isArray(call['_meta']);
          assert.deepEqual(
            meta['progressToken'],
            wasObject && given !== undefined ? given : ownProgressToken(t.taskId),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
