/**
 * The memory store's table of replay logs (events/stream-table.ts): a session's one log is held
 * directly, a Map is made for a second one, and every operation sees both shapes alike.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StreamTable } from '../../src/events/stream-table.js';

const log = (streamId: number, tag = '') => ({ streamId, tag });

test('one log per session, then several: get, add, delete, dropSession, sweep and logs agree', () => {
  const t = new StreamTable<ReturnType<typeof log>>();
  assert.equal(t.add('a', log(0)), true, 'a new session');
  assert.equal(t.get('a', 0)?.streamId, 0);
  assert.equal(t.get('a', 1), undefined, 'another stream of a one-log session');
  assert.equal(t.get('b', 0), undefined);
  assert.equal(t.add('a', log(1)), false, 'a second log of the session');
  assert.equal(t.add('a', log(2)), false);
  assert.deepEqual(
    [0, 1, 2].map((n) => t.get('a', n)?.streamId),
    [0, 1, 2],
  );
  t.add('b', log(5, 'b'));
  assert.equal(t.size, 2);
  assert.deepEqual([...t.logs()].map((l) => l.streamId).sort(), [0, 1, 2, 5]);
  t.delete('a', 1);
  assert.equal(t.get('a', 1), undefined);
  assert.equal(t.get('a', 2)?.streamId, 2);
  t.delete('b', 4);
  assert.equal(t.get('b', 5)?.tag, 'b', 'deleting another stream number leaves the log');
  t.delete('b', 5);
  assert.equal(t.size, 1, 'a session goes with its last log');
  assert.deepEqual(
    [...t.dropSession('a')].map((l) => l.streamId),
    [0, 2],
  );
  assert.equal(t.size, 0);
  assert.deepEqual([...t.dropSession('a')], []);
});

test('sweep drops what it is told to, and sessions left without logs', () => {
  const t = new StreamTable<ReturnType<typeof log>>();
  t.add('one', log(0));
  t.add('two', log(0));
  t.add('two', log(1));
  t.add('keep', log(3));
  const seen: string[] = [];
  t.sweep((l) => {
    seen.push(`${l.streamId}`);
    return l.streamId !== 3;
  });
  assert.deepEqual(seen.sort(), ['0', '0', '1', '3']);
  assert.equal(t.size, 1);
  assert.equal(t.get('keep', 3)?.streamId, 3);
});
