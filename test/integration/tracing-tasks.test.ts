/**
 * A task keeps the trace of the call that created it (tasks keep one trace from creation to
 * completion): the tool runs detached from the creating response, later rounds run on whichever
 * instance takes the `tasks/update`, yet every span of the tool's runs carries the creator's
 * `_meta.traceparent` trace id, because each round is served from the stored request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTasks, type Served, serve } from '../../src/server/index.js';
import { until } from '../helpers/http.js';
import { modernBody, modernSend } from '../helpers/modern.js';
import { api, testTracing } from '../helpers/otel.js';
import { DECLARED, getTask, newProbe, pollTask, TASK_TOOLS, taskServer } from '../helpers/tasks.js';

const tracing = testTracing();
const probe = newProbe();
let served: Served;

before(async () => {
  served = await serve({
    createServer: taskServer(probe),
    port: 0,
    host: '127.0.0.1',
    keepaliveMs: 0,
    tracing: { api, tracer: tracing.provider.getTracer('sluice') },
    tasks: createTasks({ taskAfterMs: 0, tools: TASK_TOOLS, pollIntervalMs: 20 }),
  });
});
after(() => served.close());

describe('tasks and traces', () => {
  test("the creating call, the tool's run and its completion share the creator's trace", async () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    const body = modernBody(
      'tools/call',
      { name: 'slow', arguments: { gate: 'traced' } },
      { ...DECLARED, traceparent: `00-${trace}-${parent}-01` },
    );
    const r = await modernSend(served.url, body);
    assert.equal(r.status, 200, r.text);
    const created = r.json().result;
    assert.equal(created.resultType, 'task');
    await until(() => probe.gates.has('traced'), 5_000, 'the tool running');
    // A poll from elsewhere (no traceparent) is a trace of its own.
    const polled = await getTask(served.url, created.taskId);
    assert.equal(polled.result.status, 'working');
    probe.gates.get('traced')?.();
    await pollTask(served.url, created.taskId, (x) => x.status === 'completed', 5_000);
    const spans = await (async () => {
      const end = Date.now() + 5_000;
      for (;;) {
        const s = tracing.spans().filter((x) => x.spanContext().traceId === trace);
        if (s.length >= 1 || Date.now() > end) return s;
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    const all = JSON.stringify(
      tracing.spans().map((s) => [s.name, s.spanContext().traceId, s.attributes['jsonrpc.request.id']]),
    );
    // The tool's run, detached from the creating response, is in the creator's trace, a child of
    // the client's span, under the task's own request id.
    const run = spans.find((s) => s.attributes['jsonrpc.request.id'] === `sluice-task:${created.taskId}`);
    assert.ok(run !== undefined, `no span of the task's run in the creator's trace: ${all}`);
    assert.equal(run.name, 'tools/call slow');
    assert.equal(run.parentSpanContext?.spanId, parent);
  });
});
