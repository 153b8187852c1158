/**
 * A 2025-11-25 task whose tool asks the client (legacy-input.ts): the request reaches the client
 * only once the task reads input_required in its store, so a client polling the task as soon as
 * it gets the request sees it waiting on it (the order SDK v1's own task store gives). A store
 * that fails that write does not hold the request back.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { MemoryTaskStore, type TaskStore } from '../../src/server/index.js';
import { until } from '../helpers/http.js';
import { elicitingClient, serveAsksTool, startToolTask, taskResultText } from '../helpers/sdk-tasks.js';

type Settle = TaskStore['settle'];

/** A MemoryTaskStore whose flips to input_required go through `flip` first. */
function storeWith(flip: (go: () => ReturnType<Settle>) => ReturnType<Settle>): TaskStore {
  const inner = new MemoryTaskStore();
  return {
    create: (t, max) => inner.create(t, max),
    get: (id, owner) => inner.get(id, owner),
    renew: (id, runner, until) => inner.renew(id, runner, until),
    progress: (id, runner, p) => inner.progress(id, runner, p),
    settle: (id, runner, s) =>
      s.status === 'input_required' ? flip(() => inner.settle(id, runner, s)) : inner.settle(id, runner, s),
    cancel: (id, owner, message) => inner.cancel(id, owner, message),
    list: (owner, cursor, limit) => inner.list(owner, cursor, limit),
    answer: (id, owner, r, runner, until) => inner.answer(id, owner, r, runner, until),
    onCancel: (l) => inner.onCancel(l),
    close: () => inner.close(),
  };
}

function serveRelatedAsk(store: TaskStore) {
  return serveAsksTool(
    async (_server, extra) => {
      const r = await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: { message: 'name?', requestedSchema: { type: 'object', properties: {} } },
        },
        ElicitResultSchema,
      );
      return { content: [{ type: 'text', text: `got ${r.action}` }] };
    },
    { store },
  );
}

/** A client that, on each request of a task, reads the task's status (into `during`) and accepts. */
async function pollingClient(url: string, during: string[]): Promise<Client> {
  const c: Client = await elicitingClient(url, async (req) => {
    const meta = req.params._meta as Record<string, { taskId?: string }> | undefined;
    const id = meta?.['io.modelcontextprotocol/related-task']?.taskId ?? 'none';
    during.push((await c.experimental.tasks.getTask(id)).status);
    return { action: 'accept', content: {} };
  });
  return c;
}

describe('2025-11-25 tasks: a request of the tool reaches the client after the task reads input_required', () => {
  test('the write held: the request waits for it; the client then polls input_required', async () => {
    let held = 0;
    let release: (() => void) | undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const s = await serveRelatedAsk(
      storeWith(async (go) => {
        held++;
        await gate;
        return go();
      }),
    );
    const during: string[] = [];
    const c = await pollingClient(s.url, during);
    try {
      const id = await startToolTask(c, 'asks', {});
      await until(() => held === 1, 10_000, 'the flip to input_required reached the store');
      // The write is held: a client polling now still reads working, and has no request yet.
      assert.equal((await c.experimental.tasks.getTask(id)).status, 'working');
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(during, [], 'the request did not overtake the write');
      release?.();
      await until(() => during.length === 1, 10_000, 'the request reached the client');
      assert.deepEqual(during, ['input_required']);
      assert.equal(await taskResultText(c, id), 'got accept');
    } finally {
      await c.close();
      await s.close();
    }
  });

  test('the write failed: the request still goes out, the answer reaches the tool, the task completes', async () => {
    let failed = 0;
    const s = await serveRelatedAsk(
      storeWith(async () => {
        failed++;
        throw new Error('the store is down');
      }),
    );
    const during: string[] = [];
    const c = await pollingClient(s.url, during);
    try {
      const id = await startToolTask(c, 'asks', {});
      assert.equal(await taskResultText(c, id), 'got accept');
      assert.equal(failed, 1);
      assert.deepEqual(during, ['working'], 'the status stayed as the store had it');
    } finally {
      await c.close();
      await s.close();
    }
  });
});
