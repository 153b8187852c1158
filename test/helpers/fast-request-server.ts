/**
 * The server of the fast request path tests (src/core/sdk/fast-request.ts): an SDK v1 McpServer
 * whose tools and prompts report what their `extra` was and did, served by Sluice with the fast
 * dispatch or without it (`fastDispatch: false`: the SDK's own `_onrequest`).
 */
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema, EmptyResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type Served, type ServeOptions, serve } from '../../src/server/index.js';

type Extra = Record<string, unknown> & { signal: AbortSignal };

/** What the tools saw, per server. */
export interface Seen {
  /** `extra`'s constructor per request: 'RequestExtra' (the fast path) or 'Object' (the SDK's). */
  paths: string[];
  /** Reports of the tools that outlive their request, by tool. */
  reports: Map<string, unknown>;
  /** Tools waiting for the test (by tool), and the gates that let them go on. */
  waiting: Set<string>;
  gates: Map<string, () => void>;
  /** Every McpServer made, to read the SDK's table of requests in flight afterwards. */
  servers: McpServer[];
}

/** The elicitation the tools send: a one-field form. */
const ASK_NAME = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
  },
} as const;

function text(value: unknown): { content: { type: 'text'; text: string }[] } {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

/** Waits until the test opens the gate for `name`. */
function gate(seen: Seen, name: string): Promise<void> {
  seen.waiting.add(name);
  return new Promise((resolve) => seen.gates.set(name, resolve));
}

function reasonOf(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  return r instanceof Error ? `${r.name}: ${r.message}` : String(r);
}

/** `taskStore`: one store for every session of the server (as an `sdkTaskStore` would be). */
function build(seen: Seen, taskStore: InMemoryTaskStore | undefined): McpServer {
  const tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
  const server = new McpServer(
    { name: 'fast-request-test', version: '1' },
    taskStore === undefined
      ? { capabilities: { logging: {} } }
      : { taskStore, capabilities: { logging: {}, tasks } },
  );
  seen.servers.push(server);
  const path = (extra: object): void => {
    seen.paths.push(extra.constructor.name);
  };
  if (taskStore !== undefined)
    // taskSupport 'optional' and called without a task: the SDK creates the task, polls it through
    // the request's `extra.taskStore` and answers with its result.
    server.experimental.tasks.registerToolTask(
      'auto-task',
      { inputSchema: { n: z.number() }, execution: { taskSupport: 'optional' } },
      {
        createTask: async ({ n }, extra) => {
          path(extra);
          const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 10 });
          setTimeout(() => {
            void extra.taskStore.storeTaskResult(task.taskId, 'completed', text({ n, done: true }));
          }, 20);
          return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as ReturnType<typeof text>,
      },
    );
  if (taskStore !== undefined)
    // The same, and the task's work sends a request on the task's behalf (`relatedTask`): the SDK
    // marks the task input_required first; the result reports the status the work then read.
    server.experimental.tasks.registerToolTask(
      'auto-ask',
      { inputSchema: {}, execution: { taskSupport: 'optional' } },
      {
        createTask: async (_args, extra) => {
          const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 10 });
          const work = async (): Promise<void> => {
            // Without a task message queue the SDK's request() refuses a related task's message
            // (it would be queued for tasks/result) after the status was set: both are reported.
            let outcome: string;
            try {
              await extra.sendRequest(ASK_NAME, ElicitResultSchema, {
                relatedTask: { taskId: task.taskId },
              } as never);
              outcome = 'sent';
            } catch (err) {
              outcome = (err as Error).message;
            }
            const status = (await extra.taskStore.getTask(task.taskId)).status;
            await extra.taskStore.storeTaskResult(task.taskId, 'completed', text({ outcome, status }));
          };
          void work();
          return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as ReturnType<typeof text>,
      },
    );
  server.registerTool('fields', { inputSchema: { n: z.number() } }, async ({ n }, raw) => {
    const extra = raw as unknown as Extra;
    path(extra);
    const spread = { ...extra };
    return text({
      n,
      keys: Object.keys(extra).sort(),
      spreadSignal: spread.signal instanceof AbortSignal && spread.signal === extra.signal,
      aborted: extra.signal.aborted,
      requestId: extra['requestId'],
      sessionId: typeof extra['sessionId'],
      meta: extra['_meta'] ?? null,
      tasks: [extra['taskId'], extra['taskStore'], extra['taskRequestedTtl']].map(String),
      closers: [typeof extra['closeSSEStream'], typeof extra['closeStandaloneSSEStream']],
      headers: typeof (extra['requestInfo'] as { headers?: unknown } | undefined)?.headers,
    });
  });
  // Reads its signal only after the test let it go on (after a cancellation, in the tests).
  server.registerTool('late-signal', { inputSchema: {} }, async (_args, raw) => {
    const extra = raw as unknown as Extra;
    path(extra);
    await gate(seen, 'late-signal');
    const report: Record<string, unknown> = { aborted: extra.signal.aborted, reason: reasonOf(extra.signal) };
    try {
      await (extra['sendRequest'] as (r: unknown, s: unknown) => Promise<unknown>)(
        { method: 'ping' },
        EmptyResultSchema,
      );
      report['sendRequest'] = 'sent';
    } catch (err) {
      report['sendRequest'] = `${(err as McpError).code} ${(err as Error).message}`;
    }
    try {
      await (extra['sendNotification'] as (n: unknown) => Promise<void>)({
        method: 'notifications/message',
        params: { level: 'info', data: 'late' },
      });
      report['sendNotification'] = 'resolved';
    } catch (err) {
      report['sendNotification'] = String(err);
    }
    seen.reports.set('late-signal', report);
    return text('never sent');
  });
  // Listens to its signal at once; reports the abort event's reason.
  server.registerTool('early-signal', { inputSchema: {} }, async (_args, raw) => {
    const extra = raw as unknown as Extra;
    path(extra);
    const aborted = new Promise<void>((resolve) =>
      extra.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    seen.waiting.add('early-signal');
    await aborted;
    seen.reports.set('early-signal', { aborted: extra.signal.aborted, reason: reasonOf(extra.signal) });
    return text('never sent');
  });
  // Asks the client (elicitation) on its own stream, then answers with what the client said.
  server.registerTool('ask', { inputSchema: {} }, async (_args, raw) => {
    const extra = raw as unknown as Extra;
    path(extra);
    const answer = await (extra['sendRequest'] as (r: unknown, s: unknown) => Promise<unknown>)(
      ASK_NAME,
      ElicitResultSchema,
    );
    return text(answer);
  });
  // Errors as a handler throws them: the JSON-RPC error answer is built from what was thrown.
  server.registerPrompt('fail', { argsSchema: { kind: z.string() } }, async ({ kind }, raw) => {
    path(raw);
    if (kind === 'mcp') throw new McpError(-32099, 'custom', { detail: [1, 'two'] });
    if (kind === 'plain') throw new Error('plain failure');
    if (kind === 'fraction') throw Object.assign(new Error('odd code'), { code: 1.5, data: null });
    if (kind === 'string') throw 'a thrown string';
    if (kind === 'no-message') throw { code: 7 };
    return { messages: [] };
  });
  return server;
}

export interface Running {
  srv: Served;
  seen: Seen;
  /** Closes the server and clears its task store's timers. */
  close(): Promise<void>;
}

export async function start(options: Partial<ServeOptions>, withTasks = false): Promise<Running> {
  const taskStore = withTasks ? new InMemoryTaskStore() : undefined;
  const seen: Seen = { paths: [], reports: new Map(), waiting: new Set(), gates: new Map(), servers: [] };
  const srv = await serve({
    host: '127.0.0.1',
    port: 0,
    mode: 'sse',
    keepaliveMs: 0,
    ...options,
    createServer: () => build(seen, taskStore) as never,
  });
  return {
    srv,
    seen,
    close: async () => {
      await srv.close();
      taskStore?.cleanup();
    },
  };
}

/** The size of the SDK's table of requests in flight of `s`. */
export function tableSize(s: McpServer): number {
  return (s.server as unknown as { _requestHandlerAbortControllers: Map<unknown, unknown> })
    ._requestHandlerAbortControllers.size;
}

/** The sizes of the tables of every server `seen` made. */
export function inFlight(seen: Seen): number[] {
  return seen.servers.map(tableSize);
}
