// The fast request path (src/core/sdk/fast-request.ts) against the SDK's own `_onrequest`
// (`fastDispatch: false`): a handler's `extra` has the same fields (also in a spread); cancellation
// before the handler reads its signal, after, and by the session's end give the same signal, reason
// and refusals; a request to the client rides the request's stream; thrown errors become the same
// JSON-RPC errors; task requests and unknown methods take the SDK's path; the SDK's table of
// requests in flight is left empty. Every answer is compared byte for byte with the SDK path's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { normalized } from '../helpers/fast-notify-server.js';
import { inFlight, type Running, start, tableSize } from '../helpers/fast-request-server.js';
import { notification, RawSession, rpc, toolCall, until } from '../helpers/http.js';
import { modernBody, modernSend } from '../helpers/modern.js';

type Name = 'fast' | 'sdk' | 'fast-tasks' | 'sdk-tasks';
const NAMES = ['fast', 'sdk'] as const;
/** Servers with an SDK task store (each its own), fast path and SDK path. */
const TASKS = ['fast-tasks', 'sdk-tasks'] as const;
const servers = {} as Record<Name, Running>;
before(async () => {
  servers.fast = await start({});
  servers.sdk = await start({ fastDispatch: false });
  servers['fast-tasks'] = await start({}, true);
  servers['sdk-tasks'] = await start({ fastDispatch: false }, true);
});
after(async () => {
  for (const r of Object.values(servers)) await r.close();
});

/** The answer to `body` from a pair of servers, each in a new session (initialized with `caps`). */
async function both(
  body: unknown,
  caps: Record<string, unknown> = {},
  pair: readonly [Name, Name] = NAMES,
): Promise<{ fast: string; sdk: string }> {
  const out: string[] = [];
  for (const name of pair) {
    const s = new RawSession(servers[name].srv.url);
    await s.init(undefined, caps);
    const reply = await s.post(body);
    assert.equal(reply.status, 200, `${name}: ${reply.text}`);
    out.push(normalized(reply.text));
    // Before the session ends (its close would clear the table anyway): this request's entry is gone.
    const mine = servers[name].seen.servers.at(-1);
    await until(() => mine !== undefined && tableSize(mine) === 0, 5_000, `${name}: table empty`);
    await s.delete();
  }
  return { fast: out[0] ?? '', sdk: out[1] ?? '' };
}

/** A new session on `name`'s server, calling `tool` (no arguments) as request `id`, once the tool runs. */
async function running(name: Name, tool: string, id: string) {
  const { seen, srv } = servers[name];
  const s = new RawSession(srv.url);
  await s.init();
  const answer = await s.postOpen(toolCall(tool, {}, id));
  await until(() => seen.waiting.has(tool), 5_000, `${name}: tool running`);
  seen.waiting.delete(tool);
  return { s, answer, seen };
}

/** The JSON a tool put in its text result, from the SSE answer `text` to request `id`. */
function resultOf(text: string, id: string): Record<string, unknown> {
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const m = JSON.parse(line.slice(6)) as { id?: unknown; result?: { content?: { text?: string }[] } };
    if (m.id === id) return JSON.parse(m.result?.content?.[0]?.text ?? 'null');
  }
  throw new Error(`no result for ${id} in ${text}`);
}

/** `text` with task ids (UUIDs, random per server) replaced. */
function uuids(text: string): string {
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID');
}

function lastPath(name: Name): string | undefined {
  return servers[name].seen.paths.at(-1);
}

describe('the fast request path', () => {
  test("a handler's extra: the same fields, values and spread as the SDK's", async () => {
    for (const meta of [undefined, { progressToken: 'p1', other: [1] }]) {
      const body = toolCall('fields', { n: 1 }, 'f1', undefined);
      if (meta !== undefined) (body['params'] as Record<string, unknown>)['_meta'] = meta;
      const got = await both(body);
      assert.equal(lastPath('fast'), 'RequestExtra', 'the fast path ran');
      assert.equal(lastPath('sdk'), 'Object', "the SDK's _onrequest ran");
      assert.equal(got.fast, got.sdk);
      const fields = resultOf(got.fast, 'f1');
      assert.deepEqual(fields['keys'], [
        '_meta',
        'authInfo',
        'closeSSEStream',
        'closeStandaloneSSEStream',
        'requestId',
        'requestInfo',
        'sendNotification',
        'sendRequest',
        'sessionId',
        'signal',
        'taskId',
        'taskRequestedTtl',
        'taskStore',
      ]);
      assert.equal(fields['spreadSignal'], true, 'a spread of extra keeps the same signal');
      assert.deepEqual(fields['meta'], meta ?? null);
    }
  });

  test('2026-07-28 requests take it too, with the same answer', async () => {
    const bodies: string[] = [];
    for (const name of NAMES) {
      const reply = await modernSend(
        servers[name].srv.url,
        modernBody('tools/call', { name: 'fields', arguments: { n: 2 } }, {}, 4),
      );
      assert.equal(reply.status, 200);
      bodies.push(reply.text);
    }
    assert.equal(lastPath('fast'), 'RequestExtra');
    assert.equal(bodies[0], bodies[1]);
  });

  for (const reason of ['stop', undefined]) {
    test(`cancelled before the handler read its signal (reason ${String(reason)}): aborted, same reason, requests refused, nothing sent`, async () => {
      const reports: unknown[] = [];
      for (const name of NAMES) {
        const { s, answer, seen } = await running(name, 'late-signal', 'c1');
        const params: Record<string, unknown> = { requestId: 'c1' };
        if (reason !== undefined) params['reason'] = reason;
        assert.equal((await s.post(notification('notifications/cancelled', params))).status, 202);
        seen.gates.get('late-signal')?.();
        await until(() => seen.reports.has('late-signal'), 5_000, `${name}: report`);
        reports.push(seen.reports.get('late-signal'));
        seen.reports.delete('late-signal');
        await answer.finished(5_000, `${name}: cancelled answer`);
        assert.doesNotMatch(answer.text, /never sent|late/, `${name}: nothing after cancellation`);
        await s.delete();
      }
      assert.equal(lastPath('fast'), 'RequestExtra');
      assert.deepEqual(reports[0], reports[1]);
      assert.deepEqual(reports[0], {
        aborted: true,
        reason: reason ?? 'AbortError: This operation was aborted',
        sendRequest: '-32000 MCP error -32000: Request was cancelled',
        sendNotification: 'resolved',
      });
    });
  }

  for (const how of ['cancel', 'session end'] as const) {
    test(`a handler listening to its signal hears the abort (${how}) as on the SDK path`, async () => {
      const reports: unknown[] = [];
      for (const name of NAMES) {
        const { s, answer, seen } = await running(name, 'early-signal', 'e1');
        if (how === 'cancel')
          await s.post(notification('notifications/cancelled', { requestId: 'e1', reason: 'enough' }));
        else assert.equal((await s.delete()).status, 204);
        await until(() => seen.reports.has('early-signal'), 5_000, `${name}: report`);
        reports.push(seen.reports.get('early-signal'));
        seen.reports.delete('early-signal');
        await answer.finished(5_000, `${name}: answer`);
        assert.doesNotMatch(answer.text, /never sent/);
        if (how === 'cancel') await s.delete();
      }
      assert.deepEqual(reports[0], reports[1]);
      assert.deepEqual(reports[0], {
        aborted: true,
        reason: how === 'cancel' ? 'enough' : 'AbortError: This operation was aborted',
      });
    });
  }

  test('a request to the client goes out on the request stream and its answer comes back', async () => {
    const bodies: string[] = [];
    for (const name of NAMES) {
      const s = new RawSession(servers[name].srv.url);
      await s.init(undefined, { elicitation: { form: {} } });
      const answer = await s.postOpen(toolCall('ask', {}, 'a1'));
      const ask = await answer.waitMessage((m) => m.method === 'elicitation/create', 5_000, `${name}: ask`);
      const r = await s.post({
        jsonrpc: '2.0',
        id: ask.id,
        result: { action: 'accept', content: { name: 'Ada' } },
      });
      assert.equal(r.status, 202);
      await answer.finished(5_000, `${name}: answer`);
      bodies.push(normalized(answer.text));
      await s.delete();
    }
    assert.equal(lastPath('fast'), 'RequestExtra');
    assert.equal(bodies[0], bodies[1]);
    assert.match(bodies[0] ?? '', /\\"name\\":\\"Ada\\"/);
  });

  test('thrown errors become the same JSON-RPC errors', async () => {
    for (const kind of ['mcp', 'plain', 'fraction', 'string', 'no-message']) {
      const got = await both(rpc('prompts/get', { name: 'fail', arguments: { kind } }, `p-${kind}`));
      assert.equal(lastPath('fast'), 'RequestExtra', kind);
      assert.equal(got.fast, got.sdk, kind);
      assert.match(got.fast, /"error":\{"code":-?\d+/, kind);
    }
  });

  test("task requests, related-task requests and unknown methods take the SDK's path", async () => {
    const related = toolCall('fields', { n: 3 }, 'r1');
    (related['params'] as Record<string, unknown>)['_meta'] = {
      'io.modelcontextprotocol/related-task': { taskId: 't-1' },
    };
    const task = toolCall('fields', { n: 4 }, 't1');
    (task['params'] as Record<string, unknown>)['task'] = { ttl: 60_000 };
    for (const body of [related, task, rpc('no/such-method', {}, 'm1')]) {
      const before = servers.fast.seen.paths.length;
      const got = await both(body);
      assert.equal(got.fast, got.sdk, JSON.stringify(body));
      assert.ok(
        servers.fast.seen.paths.slice(before).every((p) => p === 'Object'),
        `the SDK's _onrequest ran: ${JSON.stringify(body)}`,
      );
    }
  });

  test("with an SDK task store: the same extra (its request's task store), and a tool's automatic task polled through it", async () => {
    const fields = await both(toolCall('fields', { n: 5 }, 'f5'), {}, TASKS);
    assert.equal(servers['fast-tasks'].seen.paths.at(-1), 'RequestExtra', 'the fast path ran');
    assert.equal(servers['sdk-tasks'].seen.paths.at(-1), 'Object');
    assert.equal(fields.fast, fields.sdk);
    assert.deepEqual(resultOf(fields.fast, 'f5')['tasks'], ['undefined', '[object Object]', 'undefined']);
    const auto = await both(toolCall('auto-task', { n: 6 }, 'a6'), {}, TASKS);
    assert.equal(uuids(auto.fast), uuids(auto.sdk));
    assert.deepEqual(resultOf(auto.fast, 'a6'), { n: 6, done: true });
  });

  test("with an SDK task store: a request sent on a task's behalf marks the task input_required, as on the SDK path", async () => {
    const got = await both(toolCall('auto-ask', {}, 'q1'), {}, TASKS);
    assert.equal(uuids(got.fast), uuids(got.sdk));
    const result = resultOf(got.fast, 'q1');
    assert.equal(result['status'], 'input_required');
    assert.match(String(result['outcome']), /taskMessageQueue/);
  });

  test("no request is left in the SDK's table of requests in flight", async () => {
    for (const [names, sessions] of [
      [NAMES, 5],
      [TASKS, 2],
    ] as const)
      for (const name of names) {
        await until(() => inFlight(servers[name].seen).every((n) => n === 0), 5_000, `${name}: table empty`);
        assert.ok(servers[name].seen.servers.length >= sessions, `${name}: its sessions' servers were read`);
      }
  });
});
