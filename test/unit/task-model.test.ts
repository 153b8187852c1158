/**
 * The task model's wire shapes: `detailedTaskJson` (what `tasks/get` sends, the stored result text
 * spliced in rather than parsed and re-serialized) and `createTaskResultJson` are exactly
 * `JSON.stringify` of the objects SEP-2663 describes (built here, plainly, as the reference) for
 * every status and field combination, and the ISO times stay right whatever order they are asked in;
 * `copyRecord` keeps every field's value and gives every record one key order, `newWorkingTask`'s.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { META_TASK_PARTIAL } from '../../src/jsonrpc/meta-keys.js';
import {
  copyRecord,
  createTaskResultJson,
  detailedTaskJson,
  isTerminal,
  newTaskId,
  newWorkingTask,
  type TaskRecord,
} from '../../src/tasks/model.js';

/** The `Task` fields both shapes share, as objects (the reference the JSON writers are held to). */
function taskFields(t: TaskRecord): Record<string, unknown> {
  return {
    taskId: t.taskId,
    status: t.status,
    createdAt: new Date(t.createdAt).toISOString(),
    lastUpdatedAt: new Date(t.lastUpdatedAt).toISOString(),
    ttlMs: t.ttlMs,
    pollIntervalMs: t.pollIntervalMs,
    ...(statusMessageOf(t) === undefined ? {} : { statusMessage: statusMessageOf(t) }),
  };
}

/** A failed task's statusMessage is its error's message (SEP-2663 "Task Execution Errors"). */
function statusMessageOf(t: TaskRecord): string | undefined {
  return t.status === 'failed' && t.error !== undefined ? t.error.message : t.statusMessage;
}

/** The flat CreateTaskResult. */
function createTaskResult(t: TaskRecord): Record<string, unknown> {
  return { resultType: 'task', ...taskFields(t) };
}

/** The DetailedTask of `tasks/get`, stored JSON texts parsed. */
function detailedTask(t: TaskRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { resultType: 'complete', ...taskFields(t) };
  if (!isTerminal(t.status) && t.partialText !== undefined) {
    out['_meta'] = { [META_TASK_PARTIAL]: { text: t.partialText, truncated: t.partialTruncated === true } };
  }
  if (t.status === 'failed' && t.error !== undefined) out['error'] = t.error;
  if (t.status === 'input_required' && t.inputRequests !== undefined) {
    out['inputRequests'] = Object.fromEntries(
      Object.entries(t.inputRequests).map(([k, v]) => [k, JSON.parse(v)]),
    );
  }
  if (t.status === 'completed' && t.result !== undefined) out['result'] = JSON.parse(t.result);
  return out;
}

const json = fc.jsonValue().map((v) => JSON.stringify(v));
const ms = fc.integer({ min: 0, max: 4_102_444_800_000 });

const record: fc.Arbitrary<TaskRecord> = fc.record(
  {
    taskId: fc.stringMatching(/^[A-Za-z0-9_-]{16,64}$/),
    owner: fc.string(),
    client: fc.string(),
    status: fc.constantFrom('working', 'input_required', 'completed', 'failed', 'cancelled'),
    createdAt: ms,
    lastUpdatedAt: ms,
    ttlMs: fc.nat(),
    pollIntervalMs: fc.nat(),
    statusMessage: fc.string(),
    partialText: fc.string(),
    partialTruncated: fc.boolean(),
    result: fc.oneof(
      json,
      fc.object().map((o) => JSON.stringify(o)),
    ),
    error: fc.record({ code: fc.integer(), message: fc.string() }, { requiredKeys: ['code', 'message'] }),
    inputRequests: fc.dictionary(fc.string(), json),
    call: json,
  },
  {
    requiredKeys: [
      'taskId',
      'owner',
      'client',
      'status',
      'createdAt',
      'lastUpdatedAt',
      'ttlMs',
      'pollIntervalMs',
      'call',
    ],
  },
);

test('task ids: 43 base64url characters, distinct, never starting with "-" (a command line would read an option)', () => {
  // 6,400 draws: an id generator that let "-" lead would show one with probability 1 - (63/64)^6400 > 0.999.
  const ids = Array.from({ length: 6400 }, newTaskId);
  for (const id of ids) assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/);
  assert.equal(new Set(ids).size, ids.length);
  assert.ok(new Set(ids.map((id) => id[0])).size >= 60, 'every other first character is drawn');
});

describe('task model wire shapes', () => {
  test("a failed task's statusMessage is its error's message, not the last progress", () => {
    const t = newWorkingTask({
      ...{ owner: 'anon', client: 'c', ttlMs: 60_000, pollIntervalMs: 100, call: '{}' },
      ...{ runner: 'r', leaseMs: 1000, now: 1_000_000 },
    });
    t.statusMessage = 'step 2 of 3';
    t.status = 'failed';
    t.error = { code: -32603, message: 'Internal error: the disk is full' };
    const got = JSON.parse(detailedTaskJson(t));
    assert.equal(got.statusMessage, 'Internal error: the disk is full');
    assert.deepEqual(got.error, t.error);
  });

  test('detailedTaskJson is JSON.stringify(detailedTask) for any record', () => {
    fc.assert(
      fc.property(record, (t) => {
        assert.equal(detailedTaskJson(t), JSON.stringify(detailedTask(t)));
      }),
      { numRuns: 2000 },
    );
  });

  test('createTaskResultJson is JSON.stringify(createTaskResult) for any record', () => {
    fc.assert(
      fc.property(record, (t) => {
        assert.equal(createTaskResultJson(t), JSON.stringify(createTaskResult(t)));
      }),
      { numRuns: 2000 },
    );
  });

  test('ISO times are right whichever times were asked for before', () => {
    // Times far apart and times in the same or the next second (iso() keeps the text of two
    // seconds and builds the rest from it).
    const near = fc.tuple(ms, fc.integer({ min: -1500, max: 1500 })).map(([a, d]) => [a, Math.max(0, a + d)]);
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.tuple(ms, ms), near), { minLength: 1, maxLength: 20 }), (pairs) => {
        for (const [a = 0, b = 0] of pairs) {
          const base = { taskId: 'x'.repeat(16), owner: 'o', client: 'c', status: 'working' as const };
          const t: TaskRecord = {
            ...base,
            createdAt: a,
            lastUpdatedAt: b,
            ttlMs: 1,
            pollIntervalMs: 1,
            call: '{}',
          };
          const r = JSON.parse(createTaskResultJson(t)) as Record<string, unknown>;
          assert.equal(r['createdAt'], new Date(a).toISOString());
          assert.equal(r['lastUpdatedAt'], new Date(b).toISOString());
        }
      }),
    );
  });

  test('copyRecord: the same values, every field present, in newWorkingTask order', () => {
    const keys = Object.keys(
      newWorkingTask({
        owner: 'o',
        client: 'c',
        ttlMs: 1,
        pollIntervalMs: 1,
        call: '{}',
        runner: 'r',
        leaseMs: 1,
        now: 0,
      }),
    );
    fc.assert(
      fc.property(record, (t) => {
        const c = copyRecord(t);
        assert.notEqual(c, t);
        assert.deepEqual(Object.keys(c), keys);
        for (const k of keys) assert.equal(c[k as keyof TaskRecord], t[k as keyof TaskRecord], k);
      }),
      { numRuns: 1000 },
    );
  });
});
