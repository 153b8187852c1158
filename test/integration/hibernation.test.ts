// Hibernation (option hibernateAfterMs, core/era-2025/wake.ts): an idle session's SDK server is closed
// and dropped, and the next message the client sends is answered by a fresh server from createServer,
// handed the client's initialize and last logging/setLevel again. What the tests hold it to: the client
// cannot tell (same answers, the same capabilities seen by the tools, the same log level, nothing extra
// on its streams), nothing that runs is dropped (a tool in flight, a question awaiting the client's
// answer), what cannot be replayed is never dropped (a resource subscription, a server used outside its
// handlers), and a server that cannot be rebuilt ends the session with a clear error.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { McpServer as V2McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { LegacyTaskOffer } from '../../src/core/era-2025/task-hook.js';
import { InvalidOptionError } from '../../src/errors.js';
import { createMcpHandler, type Served, SessionWakeError, serve } from '../../src/server/index.js';
import { CaptureSink } from '../../src/tasks/capture-sink.js';
import { withDeadline } from '../helpers/deadline.js';
import {
  ACCEPT_BOTH,
  errorOf,
  initializeBody,
  LATEST,
  type Loose,
  RawSession,
  rpc,
  send,
  toolCall,
  until,
} from '../helpers/http.js';
import { slowConnect } from '../helpers/slow-connect.js';

const AFTER_MS = 60;
const TEXT = z.object({ text: z.string() });

interface Built {
  servers: McpServer[];
  /** The servers built for each session, in order (createServer's sessionId). */
  bySession?: Map<string, McpServer[]>;
  /** Servers that saw notifications/initialized. */
  initialized?: Set<McpServer>;
  /** Resolves the `slow` tool's current call. */
  release?: () => void;
  /** Called as `whoami` runs (the session is awake then, whatever the clock does after). */
  onWhoami?: () => void;
}

/** A fresh server per session or wake, with tools that show what the server knows of its client. */
function build(b: Built, sessionId?: string): McpServer {
  const s = new McpServer({ name: 'hibernation', version: '1' }, { capabilities: { logging: {} } });
  s.registerTool('echo', { inputSchema: TEXT }, ({ text }) => ({ content: [{ type: 'text', text }] }));
  s.registerTool('whoami', {}, () => {
    b.onWhoami?.();
    const info = { capabilities: s.server.getClientCapabilities(), client: s.server.getClientVersion() };
    return { content: [{ type: 'text', text: JSON.stringify(info) }] };
  });
  s.registerTool('log', {}, async (extra) => {
    for (const level of ['info', 'error'] as const)
      await s.server.sendLoggingMessage({ level, data: level }, extra.sessionId);
    return { content: [{ type: 'text', text: 'logged' }] };
  });
  s.registerTool('slow', {}, async () => {
    await new Promise<void>((resolve) => {
      b.release = resolve;
    });
    return { content: [{ type: 'text', text: 'slow done' }] };
  });
  s.registerTool('ask', {}, async (extra) => {
    const r = await s.server.request(
      {
        method: 'elicitation/create',
        params: { message: 'name?', requestedSchema: { type: 'object', properties: {} } },
      },
      ElicitResultSchema,
      { relatedRequestId: extra.requestId },
    );
    return { content: [{ type: 'text', text: r.action }] };
  });
  // Sends a list change once its request is answered: a message no request is running for.
  s.registerTool('announce', {}, () => {
    setImmediate(() => void s.sendToolListChanged());
    return { content: [{ type: 'text', text: 'announced' }] };
  });
  s.registerResource('doc', 'mem://doc', {}, () => ({ contents: [{ uri: 'mem://doc', text: 'doc' }] }));
  s.server.setRequestHandler(
    z.object({ method: z.literal('resources/subscribe') }).passthrough(),
    () => ({}),
  );
  s.server.oninitialized = () => {
    b.initialized ??= new Set();
    b.initialized.add(s);
  };
  b.servers.push(s);
  if (sessionId !== undefined) {
    b.bySession ??= new Map();
    b.bySession.set(sessionId, [...(b.bySession.get(sessionId) ?? []), s]);
  }
  return s;
}

const textOf = (m: { result?: { content?: { text?: string }[] } }): string | undefined =>
  m.result?.content?.[0]?.text;

describe('hibernation: an idle session drops its server and wakes on the next message', () => {
  const open: Served[] = [];
  const start = async (
    b: Built,
    more: {
      createServer?: () => McpServer;
      logged?: [string, Record<string, unknown> | undefined][];
      afterMs?: number;
      tasks?: unknown;
    } = {},
  ): Promise<Served> => {
    const served = await serve({
      port: 0,
      hibernateAfterMs: more.afterMs ?? AFTER_MS,
      ...(more.tasks === undefined ? {} : { tasks: more.tasks as never }),
      createServer: more.createServer ?? ((ctx) => build(b, ctx.sessionId)),
      logger: {
        info: () => {},
        warn: () => {},
        error: (event, fields) => more.logged?.push([event, fields]),
      },
    });
    open.push(served);
    return served;
  };
  const asleep = (s: Served): number => s.handler.stats().sessions.hibernation.asleep;
  const fellAsleep = (s: Served, n = 1): Promise<void> =>
    until(() => asleep(s) === n, 3_000, `${n} session(s) asleep`);
  /** An endpoint with one initialized session, asleep. */
  const sleeping = async (b: Built): Promise<{ served: Served; c: RawSession }> => {
    const served = await start(b);
    const c = new RawSession(served.url);
    await c.init();
    await fellAsleep(served);
    return { served, c };
  };
  after(async () => {
    for (const s of open) await s.close({ graceMs: 0 });
  });

  test('the woken server knows the client as the first did: capabilities, client info, log level; the client sees nothing else', async () => {
    const b: Built = { servers: [] };
    const served = await start(b);
    const c = new RawSession(served.url);
    await c.init('2025-11-25', { elicitation: {}, roots: { listChanged: true } });
    const before = await c.post(toolCall('whoami', {}));
    assert.equal((await c.post(rpc('logging/setLevel', { level: 'error' }))).status, 200);
    const get = await c.get();
    assert.equal(get.status, 200);
    await fellAsleep(served);
    for (const s of b.servers) assert.equal(s.server.transport, undefined, 'the dropped server was closed');
    // Counted from here: on a slow machine the session may also have slept between the requests above.
    const built = b.servers.length;
    const { wakes } = served.handler.stats().sessions.hibernation;

    // Read while the woken server runs the call: read after its answer, a loaded machine could let
    // the session sleep again first (60 ms), and CI saw `asleep: 1` there.
    let during: unknown;
    b.onWhoami = () => {
      during = served.handler.stats().sessions.hibernation;
    };
    const woken = await c.post(toolCall('whoami', {}));
    assert.equal(woken.status, 200, woken.text);
    assert.equal(b.servers.length, built + 1, 'one fresh server');
    assert.deepEqual(JSON.parse(textOf(woken.json()) ?? ''), JSON.parse(textOf(before.json()) ?? ''));
    assert.deepEqual(during, { asleep: 0, wakes: wakes + 1, wakeFailures: 0 });

    // The GET stream stayed open through it all and carried nothing (the replay's answers are kept).
    assert.deepEqual(get.messages(), []);
    // The replayed setLevel holds: of the handler's info and error messages (sent unrelated, so on
    // the GET stream, in that order), only the error reaches the client.
    const logged = await c.post(toolCall('log', {}));
    assert.equal(textOf(logged.json()), 'logged');
    await get.waitMessage((m) => m.method === 'notifications/message', 3_000, 'the error log');
    assert.deepEqual(
      get.messages().map((m) => m.params?.level),
      ['error'],
    );
    // Sent while its request ran, it does not pin the session: it sleeps again.
    await fellAsleep(served);
    // The metric is the handler's count: the wake above, and any the session took between the
    // requests before it (counted from `wakes`, as above) or between the two after it on a slow machine.
    const total = served.handler.stats().sessions.hibernation.wakes;
    assert.ok(total >= wakes + 1, `${total} wakes, counted from ${wakes}`);
    assert.match(
      served.handler.metrics(),
      new RegExp(`^sluice_session_wakes_total\\{outcome="woke"\\} ${total}$`, 'm'),
    );
    get.destroy();
  });

  test('it sleeps again after the wake, and every wake answers (ten rounds)', async () => {
    const b: Built = { servers: [] };
    const { served, c } = await sleeping(b);
    for (let i = 0; i < 10; i++) {
      if (i > 0) await fellAsleep(served);
      const r = await c.post(toolCall('echo', { text: `round ${i}` }));
      assert.equal(textOf(r.json()), `round ${i}`);
    }
    assert.equal(b.servers.length, 11);
    assert.equal(served.handler.stats().sessions.hibernation.wakes, 10);
  });

  test('messages that arrive while it wakes wait for that wake: one rebuild, every one answered', async () => {
    const b: Built = { servers: [] };
    // A woken server's connect takes 50 ms, so the later messages surely arrive during the wake.
    let connecting = 0;
    const served = await start(b, {
      createServer: () => {
        const s = build(b);
        return b.servers.length > 1 ? slowConnect(s, 50, () => connecting++) : s;
      },
    });
    const c = new RawSession(served.url);
    await c.init();
    await fellAsleep(served);
    const first = c.post(toolCall('echo', { text: 'x' }));
    await until(() => connecting === 1, 3_000, 'the wake under way');
    const later = ['y', 'z'].map((text) => c.post(toolCall('echo', { text })));
    const replies = await Promise.all([first, ...later]);
    assert.deepEqual(
      replies.map((r) => textOf(r.json())),
      ['x', 'y', 'z'],
    );
    assert.equal(b.servers.length, 2, 'one rebuild for all three');
    assert.equal(served.handler.stats().sessions.hibernation.wakes, 1);
  });

  test('not while a tool runs, nor while a question awaits the client; afterwards it does', async () => {
    const b: Built = { servers: [] };
    const served = await start(b);
    const c = new RawSession(served.url);
    await c.init('2025-11-25', { elicitation: {} });
    const slow = await c.postOpen(toolCall('slow', {}));
    await until(() => b.release !== undefined, 3_000, 'the slow tool started');
    await new Promise((r) => setTimeout(r, AFTER_MS * 4));
    assert.equal(asleep(served), 0, 'a tool in flight keeps the server');
    b.release?.();
    await slow.finished(3_000, 'slow answered');
    assert.equal(textOf(slow.messages().at(-1) ?? {}), 'slow done');

    const ask = await c.postOpen(toolCall('ask', {}));
    const question = await ask.waitMessage((m) => m.method === 'elicitation/create', 3_000, 'question');
    const built = b.servers.length;
    await new Promise((r) => setTimeout(r, AFTER_MS * 4));
    assert.equal(asleep(served), 0, 'a question awaiting its answer keeps the server');
    const reply = { jsonrpc: '2.0', id: question.id, result: { action: 'decline' } };
    assert.equal((await c.post(reply)).status, 202);
    await ask.finished(3_000, 'ask answered');
    assert.equal(textOf(ask.messages().at(-1) ?? {}), 'decline');
    await fellAsleep(served);
    assert.equal(b.servers.length, built, 'no wake was needed');
  });

  test('never for a session that subscribed, or whose server sent what no request caused', async () => {
    const b: Built = { servers: [] };
    const served = await start(b);
    const subscribed = new RawSession(served.url);
    await subscribed.init();
    assert.equal((await subscribed.post(rpc('resources/subscribe', { uri: 'mem://doc' }))).status, 200);
    const used = new RawSession(served.url);
    await used.init();
    assert.equal(textOf((await used.post(toolCall('announce', {}))).json()), 'announced');
    const plain = new RawSession(served.url);
    await plain.init();
    await fellAsleep(served, 1);
    await new Promise((r) => setTimeout(r, AFTER_MS * 4));
    assert.equal(asleep(served), 1, 'only the plain session sleeps');
    const last = (r: RawSession): McpServer | undefined => b.bySession?.get(r.sid ?? '')?.at(-1);
    assert.notEqual(last(subscribed)?.server.transport, undefined, 'the subscribed session kept its server');
    assert.notEqual(last(used)?.server.transport, undefined, 'the announcing session kept its server');
    assert.equal(last(plain)?.server.transport, undefined, 'the plain session dropped its server');
    assert.equal((await plain.post(toolCall('echo', { text: 'p' }))).status, 200);
  });

  test("an oninitialized that asks for the client's roots does not keep the session awake", async () => {
    const b: Built = { servers: [] };
    const roots: unknown[] = [];
    const served = await start(b, {
      // The set-up below (initialize, GET, initialized, the roots answer) must find the first server awake.
      afterMs: 500,
      createServer: () => {
        const s = build(b);
        s.server.oninitialized = () => {
          s.server.listRoots().then(
            (r) => roots.push(r.roots),
            (e: unknown) => roots.push(e),
          );
        };
        return s;
      },
    });
    const init = await send(served.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
      body: JSON.stringify(initializeBody(LATEST, { roots: { listChanged: true } })),
    });
    const c = new RawSession(served.url);
    c.sid = String(init.headers['mcp-session-id']);
    c.version = LATEST;
    const get = await c.get();
    assert.equal((await c.post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
    // Each server asks once, on the GET stream; the client answers.
    const answer = async (n: number): Promise<void> => {
      const asks = (): Loose[] => get.messages().filter((m) => m.method === 'roots/list');
      await until(() => asks().length === n, 3_000, `roots/list #${n}`);
      const ask = asks()[n - 1];
      const reply = { jsonrpc: '2.0', id: ask?.id, result: { roots: [{ uri: `file:///r${n}` }] } };
      assert.equal((await c.post(reply)).status, 202);
    };
    await answer(1);
    await fellAsleep(served);
    assert.equal(textOf((await c.post(toolCall('echo', { text: 'r' }))).json()), 'r');
    await answer(2);
    await fellAsleep(served);
    assert.deepEqual(roots, [[{ uri: 'file:///r1' }], [{ uri: 'file:///r2' }]]);
    get.destroy();
  });

  test('a server that cannot be rebuilt: 500 naming SLUICE_SESSION_WAKE, the session ends, the client starts over', async () => {
    const b: Built = { servers: [] };
    let same: McpServer | undefined;
    const logged: [string, Record<string, unknown> | undefined][] = [];
    // A factory that hands out one server per process: fine once, refused at the wake (released).
    const served = await start(b, {
      createServer: () => {
        same ??= build(b);
        return same;
      },
      logged,
    });
    const c = new RawSession(served.url);
    await c.init();
    await fellAsleep(served);
    const r = await c.post(toolCall('echo', { text: 'x' }, 41));
    assert.equal(r.status, 500, r.text);
    assert.equal(r.json().id, 41);
    assert.match(r.json().error.message, /SLUICE_SESSION_WAKE/);
    assert.equal(errorOf(r).code, -32603);
    assert.deepEqual(
      logged.map(([event, fields]) => [event, fields?.['code']]),
      [['session.wake_failed', new SessionWakeError(undefined).code]],
    );
    assert.match(String(logged[0]?.[1]?.['error']), /could not be rebuilt: .*already/i);
    assert.equal((await c.post(toolCall('echo', { text: 'y' }))).status, 404, 'the session has ended');
    assert.deepEqual(served.handler.stats().sessions.hibernation, { asleep: 0, wakes: 0, wakeFailures: 1 });
    assert.equal(served.handler.stats().sessions.active, 0);
  });

  test('DELETE of a sleeping session ends it without waking it', async () => {
    const b: Built = { servers: [] };
    const { served, c } = await sleeping(b);
    const d = await c.delete();
    assert.ok(d.status === 200 || d.status === 204, String(d.status));
    assert.equal(asleep(served), 0);
    assert.equal(b.servers.length, 1);
    assert.equal(served.handler.stats().sessions.active, 0);
  });

  test('a refused message does not wake it', async () => {
    const b: Built = { servers: [] };
    const { served, c } = await sleeping(b);
    const stray = await c.post({ jsonrpc: '2.0', id: 'nobody-asked', result: {} });
    assert.equal(stray.status, 400);
    assert.equal(asleep(served), 1);
    assert.equal(b.servers.length, 1);
  });

  test('hibernateAfterMs 0: no server is kept between requests; initialized and a cancel do not wake it', async () => {
    const b: Built = { servers: [] };
    const served = await start(b, { afterMs: 0 });
    const c = new RawSession(served.url);
    await c.init();
    await fellAsleep(served);
    assert.equal(b.servers.length, 1, 'notifications/initialized was taken while asleep');
    const cancel = await c.post({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'x' },
    });
    assert.equal(cancel.status, 202);
    assert.equal(b.servers.length, 1, 'nor did a cancel wake it');
    for (const text of ['a', 'b', 'c']) {
      const r = await c.post(toolCall('echo', { text }));
      assert.equal(textOf(r.json()), text);
      await fellAsleep(served);
    }
    assert.equal(b.servers.length, 4, 'one server per request');
    for (const s of b.servers) assert.equal(s.server.transport, undefined, 'each was closed');
    // The first server slept before the client's notifications/initialized arrived; it was
    // remembered, and every woken server was told.
    assert.equal(b.initialized?.size, 3);
    assert.equal(b.initialized?.has(b.servers[0] as McpServer), false);
    assert.deepEqual(served.handler.stats().sessions.hibernation, { asleep: 1, wakes: 3, wakeFailures: 0 });
  });

  test('a client that never sent notifications/initialized: the wake does not send it either', async () => {
    const b: Built = { servers: [] };
    const served = await start(b);
    const init = await send(served.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH },
      body: JSON.stringify(initializeBody(LATEST, {})),
    });
    const c = new RawSession(served.url);
    c.sid = String(init.headers['mcp-session-id']);
    c.version = LATEST;
    await fellAsleep(served);
    assert.equal(textOf((await c.post(toolCall('echo', { text: 'e' }))).json()), 'e');
    assert.equal(b.servers.length, 2);
    assert.equal(b.initialized, undefined);
  });

  test("a task's run served after its session fell asleep wakes it first (2025-11-25 tasks hook)", async () => {
    const b: Built = { servers: [] };
    // A minimal legacy tasks hook: it answers the request itself, and runs the tool later, into a
    // sink of its own, as the task service does for a task (core/era-2025/task-hook.ts).
    let offered: LegacyTaskOffer | undefined;
    const hook = {
      wants: () => false,
      offer: async () => false,
      prepareLegacy: () => true,
      wantsLegacy: (method: string) => method === 'tools/call',
      offerLegacy: async (o: LegacyTaskOffer) => {
        offered = o;
        o.sink.respond(
          200,
          { 'content-type': 'application/json' },
          JSON.stringify({ jsonrpc: '2.0', id: o.req.id, result: { task: 'later' } }),
        );
        return true;
      },
    };
    const served = await start(b, { tasks: hook });
    const c = new RawSession(served.url);
    await c.init();
    const taken = await c.post(toolCall('echo', { text: 'run later' }, 'task-1'));
    assert.deepEqual(taken.json().result, { task: 'later' });
    await fellAsleep(served);
    const sink = new CaptureSink(1 << 20, () => undefined);
    assert.ok(offered !== undefined);
    const built = b.servers.length;
    offered.serve(offered.req, sink);
    const run = await withDeadline(sink.done, 5_000, "the task's run");
    assert.equal(run.kind, 'response');
    assert.equal(textOf(run.kind === 'response' ? (run.message as never) : {}), 'run later');
    assert.equal(b.servers.length, built + 1, 'the run woke the session');
  });

  test('an SDK v2 server sleeps and wakes the same way, and knows its client after the wake', async () => {
    let built = 0;
    const served = await serve({
      port: 0,
      hibernateAfterMs: AFTER_MS,
      createServer: () => {
        built++;
        const m = new V2McpServer({ name: 'v2', version: '1' });
        m.registerTool('whoami', { inputSchema: z.object({}) }, async () => ({
          content: [{ type: 'text', text: JSON.stringify(m.server.getClientVersion() ?? null) }],
        }));
        return m as never;
      },
    });
    open.push(served);
    const c = new RawSession(served.url);
    await c.init();
    const before = textOf((await c.post(toolCall('whoami', {}))).json());
    await fellAsleep(served);
    const n = built;
    const after = await c.post(toolCall('whoami', {}));
    assert.equal(after.status, 200, after.text);
    assert.equal(textOf(after.json()), before);
    assert.match(before ?? '', /"name"/);
    assert.equal(built, n + 1);
  });

  test('the option is checked once', () => {
    const createServer = (): McpServer => new McpServer({ name: 'x', version: '1' });
    for (const bad of [-1, 1.5, Number.NaN])
      assert.throws(() => createMcpHandler({ createServer, hibernateAfterMs: bad }), InvalidOptionError);
    assert.throws(
      () => createMcpHandler({ createServer, hibernateAfterMs: 1000, stateless: true }),
      /hibernateAfterMs is for sessions/,
    );
  });
});
