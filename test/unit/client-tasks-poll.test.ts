/**
 * callToolAsTask's polling (src/client/tasks.ts) against a scripted requester (no socket): what the
 * handle does with answers a server may lawfully give (SEP-2663): a `tasks/update` acknowledged
 * before `tasks/get` reflects it (§"tasks/update": the ack is eventually consistent), and a
 * `pollIntervalMs` that is no interval at all.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { callToolAsTask } from '../../src/client/tasks.js';

interface Sent {
  method: string;
  params: Record<string, unknown>;
}

/** A requester answering each request with `answer(method, params, n)` (n: that method's count). */
function scripted(answer: (method: string, params: Record<string, unknown>, n: number) => unknown): {
  client: { request: (req: unknown) => Promise<unknown> };
  sent: Sent[];
} {
  const sent: Sent[] = [];
  const counts = new Map<string, number>();
  return {
    sent,
    client: {
      request: async (req: unknown) => {
        const { method, params } = req as Sent;
        sent.push({ method, params });
        const n = counts.get(method) ?? 0;
        counts.set(method, n + 1);
        return answer(method, params, n);
      },
    },
  };
}

const task = (status: string, more: Record<string, unknown> = {}) => ({
  resultType: 'complete',
  taskId: 'task-0123456789abcdef',
  status,
  ttlMs: 60_000,
  pollIntervalMs: 20,
  ...more,
});
const ask = {
  method: 'elicitation/create',
  params: { message: 'Name?', requestedSchema: { type: 'object' } },
};

/** A user who accepts every elicitation with the same answer, counting how often they were asked. */
function answeringUser() {
  const user = {
    asked: 0,
    options: {
      inputHandlers: {
        'elicitation/create': async () => {
          user.asked++;
          return { action: 'accept' as const, content: { name: 'a' } };
        },
      },
    },
  };
  return user;
}

describe('callToolAsTask polling', () => {
  test('an input request is answered once, though tasks/get shows it again until the update lands', async () => {
    const { client, sent } = scripted((method, _params, n) => {
      if (method === 'tools/call') return { ...task('working'), resultType: 'task' };
      if (method === 'tasks/update') return { resultType: 'complete' };
      // The update is acknowledged at once but observed only from the fourth read on.
      if (n < 3) return task('input_required', { inputRequests: { name: ask } });
      return task('completed', { result: { content: [{ type: 'text', text: 'done' }] } });
    });
    const user = answeringUser();
    const handle = await callToolAsTask(client as never, { name: 'x' }, user.options);
    const result = await handle.result();
    assert.deepEqual(result, { content: [{ type: 'text', text: 'done' }] });
    assert.equal(user.asked, 1, 'the user is asked once per input request key');
    assert.deepEqual(
      sent.filter((s) => s.method === 'tasks/update').map((s) => s.params['inputResponses']),
      [{ name: { action: 'accept', content: { name: 'a' } } }],
      'one tasks/update per key',
    );
  });

  test('a tasks/update that fails (connection lost) is sent again at the next poll, without asking again', async () => {
    let updates = 0;
    const { client, sent } = scripted((method, _params, n) => {
      if (method === 'tools/call') return { ...task('working'), resultType: 'task' };
      if (method === 'tasks/update') {
        updates++;
        if (n === 0) throw new Error('socket hang up');
        return { resultType: 'complete' };
      }
      return updates < 2
        ? task('input_required', { inputRequests: { name: ask } })
        : task('completed', { result: { content: [] } });
    });
    const user = answeringUser();
    const handle = await callToolAsTask(client as never, { name: 'x' }, user.options);
    assert.deepEqual(await handle.result(), { content: [] });
    assert.equal(user.asked, 1);
    assert.equal(sent.filter((s) => s.method === 'tasks/update').length, 2);
  });

  test('a tasks/update the server refuses (-32601, 400) is final, not retried', async () => {
    for (const code of [-32601, 400]) {
      const { client, sent } = scripted((method) => {
        if (method === 'tools/call') return { ...task('working'), resultType: 'task' };
        if (method === 'tasks/update') throw Object.assign(new Error(`refused ${code}`), { code });
        return task('input_required', { inputRequests: { name: ask } });
      });
      const handle = await callToolAsTask(
        client as never,
        { name: 'x' },
        {
          inputHandlers: { 'elicitation/create': async () => ({ action: 'decline' }) },
        },
      );
      await assert.rejects(handle.result(), new RegExp(`refused ${code}`));
      assert.equal(sent.filter((s) => s.method === 'tasks/update').length, 1);
    }
  });

  test('an input request whose params are not what its method needs fails the handle; no handler runs, nothing is sent', async () => {
    const { client, sent } = scripted((method) => {
      if (method === 'tools/call') return { ...task('working'), resultType: 'task' };
      return task('input_required', {
        inputRequests: { name: { method: 'elicitation/create', params: {} } },
      });
    });
    const user = answeringUser();
    const handle = await callToolAsTask(client as never, { name: 'x' }, user.options);
    await assert.rejects(handle.result(), /input request "name" is an elicitation without a message/);
    assert.equal(user.asked, 0);
    assert.equal(sent.filter((s) => s.method === 'tasks/update').length, 0);
  });

  test('a later state asking under a used key (a new lastUpdatedAt) is answered again', async () => {
    const { client } = scripted((method, _params, n) => {
      if (method === 'tools/call') return { ...task('working'), resultType: 'task' };
      if (method === 'tasks/update') return { resultType: 'complete' };
      if (n === 0) return task('input_required', { inputRequests: { name: ask }, lastUpdatedAt: 'T1' });
      if (n === 1) return task('input_required', { inputRequests: { name: ask }, lastUpdatedAt: 'T2' });
      return task('completed', { result: { content: [] } });
    });
    const user = answeringUser();
    const handle = await callToolAsTask(client as never, { name: 'x' }, user.options);
    await handle.result();
    assert.equal(user.asked, 2);
  });

  test('a pollIntervalMs of 0 (or negative) is not taken as a pace: polls keep the default pace', async () => {
    for (const bad of [0, -5]) {
      const { client, sent } = scripted((method) =>
        method === 'tools/call'
          ? { ...task('working'), resultType: 'task', pollIntervalMs: bad }
          : task('working', { pollIntervalMs: bad }),
      );
      const stop = new AbortController();
      const handle = await callToolAsTask(
        client as never,
        { name: 'x' },
        { pollIntervalMs: 100, signal: stop.signal },
      );
      setTimeout(() => stop.abort(new Error('enough')), 350).unref();
      await assert.rejects(handle.result(), /enough/);
      const gets = sent.filter((s) => s.method === 'tasks/get').length;
      assert.ok(gets <= 5, `${gets} tasks/get in 350 ms with pollIntervalMs ${bad} (the pace is 100 ms)`);
    }
  });
});
