/**
 * A task keeps one trace across instances: created on A with the client's `_meta.traceparent`,
 * its first round runs on A; the `tasks/update` that completes its input is taken by B, so the next
 * round runs on B. Both rounds are spans in the creator's trace, children of the client's span,
 * one from each instance's tracer. Two in-process instances on one real Redis (skipped loudly
 * without redis-server).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { createTasks, RedisTaskStore, type Served, serve } from '../../src/server/index.js';
import { modernBody, modernSend } from '../helpers/modern.js';
import { api, testTracing } from '../helpers/otel.js';
import { findRedis, type Redis, skipWithoutRedis, startRedis } from '../helpers/redis.js';
import { DECLARED, newProbe, pollTask, TASK_TOOLS, taskBody, taskServer } from '../helpers/tasks.js';

const tracing = testTracing();

describe('tasks and traces across instances', () => {
  let redis: Redis | undefined;
  const links: RedisLink[] = [];
  const servers: Served[] = [];

  async function instance(name: string): Promise<Served> {
    const link = await connectNodeRedis({ url: redis?.url ?? '', commandTimeoutMs: 2000 });
    links.push(link);
    const store = new RedisTaskStore(link);
    await store.start();
    const s = await serve({
      createServer: taskServer(newProbe()),
      port: 0,
      host: '127.0.0.1',
      keepaliveMs: 0,
      tracing: { api, tracer: tracing.provider.getTracer(name) },
      tasks: createTasks({ taskAfterMs: 0, store, tools: TASK_TOOLS, pollIntervalMs: 50 }),
    });
    servers.push(s);
    return s;
  }

  before(async () => {
    if (findRedis() !== undefined) redis = await startRedis();
  });
  after(async () => {
    for (const s of servers) await s.close();
    for (const l of links) await l.close();
    await redis?.stop();
  });

  test('needs redis-server', (t) => {
    skipWithoutRedis(t);
  });
  if (findRedis() === undefined) return;

  test('round one on A, round two on B: one trace, both children of the client span', async () => {
    const a = await instance('instance-a');
    const b = await instance('instance-b');
    const trace = '0af7651916cd43dd8448eb211c80319c';
    const parent = 'b7ad6b7169203331';
    const created = await modernSend(
      a.url,
      modernBody(
        'tools/call',
        { name: 'ask', arguments: {} },
        { ...DECLARED, traceparent: `00-${trace}-${parent}-01` },
      ),
    );
    assert.equal(created.status, 200, created.text);
    const taskId: string = created.json().result.taskId;
    assert.equal(typeof taskId, 'string');
    await pollTask(b.url, taskId, (x) => x.status === 'input_required');
    const first = { first: { action: 'accept', content: { name: 'a' } } };
    await modernSend(a.url, taskBody('tasks/update', { taskId, inputResponses: first }));
    // The last answer goes through B, which applies it and runs the next round.
    const second = { second: { action: 'accept', content: { name: 'b' } } };
    await modernSend(b.url, taskBody('tasks/update', { taskId, inputResponses: second }));
    const done = await pollTask(a.url, taskId, (x) => x.status === 'completed');
    assert.equal(done.result.content[0].text, 'answers a,b state round-1');
    const runs = tracing
      .spans()
      .filter((s) => s.attributes['jsonrpc.request.id'] === `sluice-task:${taskId}`);
    const all = JSON.stringify(runs.map((s) => [s.instrumentationScope.name, s.spanContext().traceId]));
    assert.ok(runs.length >= 2, `the task's rounds as spans: ${all}`);
    assert.ok(
      runs.every((s) => s.spanContext().traceId === trace),
      `one trace: ${all}`,
    );
    assert.ok(
      runs.every((s) => s.parentSpanContext?.spanId === parent),
      'children of the client span',
    );
    const by = new Set(runs.map((s) => s.instrumentationScope.name));
    assert.deepEqual([...by].sort(), ['instance-a', 'instance-b'], `rounds on both instances: ${all}`);
  });
});
