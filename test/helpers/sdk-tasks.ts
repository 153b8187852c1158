/**
 * An SDK v1 `McpServer` that manages its own tasks (the SDK's experimental 2025-11-25 task
 * support) in a task store it is given, and an SDK v1 client that uses the SDK's experimental task
 * API, for the tests of `sdkTaskStore()`. The `job` tool (`registerToolTask`, taskSupport
 * `required`) creates its task with the requested ttl, then runs in the background until its gate
 * opens or `ms` pass, and stores `done <n>` (or, with `fail`, a failed result); what its background
 * work saw is kept in the probe.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  type CreateServer,
  createTasks,
  type Served,
  serve,
  type TaskOptions,
} from '../../src/server/index.js';
import { withDeadline } from './deadline.js';

export interface SdkJobProbe {
  /** Gates of jobs now running: call one to let its job finish. */
  gates: Map<string, () => void>;
  /** Errors the background work got from `storeTaskResult` (e.g. after a cancel), by gate. */
  storeErrors: Map<string, string>;
}

export function newSdkJobProbe(): SdkJobProbe {
  return { gates: new Map(), storeErrors: new Map() };
}

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

export function sdkTaskServer(taskStore: TaskStore, probe: SdkJobProbe): CreateServer {
  return () => {
    const server = new McpServer(
      { name: 'sdk-tasks', version: '1.0.0' },
      {
        taskStore,
        capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      },
    );
    server.experimental.tasks.registerToolTask(
      'job',
      {
        inputSchema: {
          n: z.number(),
          gate: z.string(),
          ms: z.number().optional(),
          fail: z.boolean().optional(),
        },
        execution: { taskSupport: 'required' },
      },
      {
        createTask: async ({ n, gate, ms, fail }, extra) => {
          const task = await extra.taskStore.createTask({
            ttl: extra.taskRequestedTtl ?? null,
            pollInterval: 50,
          });
          const store = extra.taskStore;
          void new Promise<void>((resolve) => {
            const t = setTimeout(resolve, ms ?? 60_000);
            t.unref();
            probe.gates.set(gate, () => {
              clearTimeout(t);
              resolve();
            });
          }).then(async () => {
            try {
              if (fail === true)
                await store.storeTaskResult(task.taskId, 'failed', { ...text(`bad ${n}`), isError: true });
              else await store.storeTaskResult(task.taskId, 'completed', text(`done ${n}`));
            } catch (error) {
              probe.storeErrors.set(gate, String(error));
            }
          });
          return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        getTaskResult: async (_args, extra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
      },
    );
    return server;
  };
}

/** An SDK v1 client over the SDK's own Streamable HTTP transport, with a bearer token if given. */
export async function sdkTaskClient(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'sdk-tasks-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } },
  );
  await withDeadline(client.connect(transport), 10_000, 'connect');
  return client;
}

/** Calls `job` as a task (the SDK client's experimental stream): the task id once it is created. */
export function startJob(
  client: Client,
  args: { n: number; gate: string; ms?: number; fail?: boolean },
  ttl?: number,
): Promise<string> {
  return startToolTask(client, 'job', args, ttl);
}

/**
 * Calls a tool as a task through the SDK client's experimental stream and leaves the stream once
 * the task is created (the task runs on; the test polls it itself): the task id.
 */
export async function startToolTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  ttl?: number,
): Promise<string> {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
    task: ttl === undefined ? {} : { ttl },
  });
  for await (const m of stream) {
    if (m.type === 'taskCreated') {
      await stream.return();
      return m.task.taskId;
    }
    if (m.type === 'error') throw m.error;
  }
  throw new Error('the stream ended without a taskCreated message');
}

/** The text of a tool result. */
export function textOf(r: unknown): string | undefined {
  return (r as { content?: { text?: string }[] }).content?.[0]?.text;
}

/**
 * An SDK v1 client declaring elicitation, whose elicitation requests `answer` handles, connected to
 * `url` (its GET stream open, where a task's requests to the client arrive).
 */
export async function elicitingClient(
  url: string,
  answer: (req: ElicitRequest) => Promise<ElicitResult>,
): Promise<Client> {
  const c = new Client({ name: 'asks-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  c.setRequestHandler(ElicitRequestSchema, answer);
  await withDeadline(c.connect(new StreamableHTTPClientTransport(new URL(url))), 10_000, 'connect');
  return c;
}

/** The text of a task's result (`tasks/result`, which waits until the task is final), within 10 s. */
export async function taskResultText(c: Client, taskId: string): Promise<string | undefined> {
  const res = await withDeadline(
    c.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
    10_000,
    `the result of task ${taskId}`,
  );
  return textOf(res);
}

/** The `extra` an SDK v1 tool handler gets. */
export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * `serve()` on a free loopback port of an SDK v1 server whose one tool, `asks`, is `run`, served as a
 * task when the client asks (policy `optional`); `tasks` adds to the task options (a store, a lease).
 */
export function serveAsksTool(
  run: (server: McpServer, extra: ToolExtra) => Promise<CallToolResult>,
  tasks: Omit<TaskOptions, 'tools'> = {},
): Promise<Served> {
  return serve({
    port: 0,
    host: '127.0.0.1',
    keepaliveMs: 0,
    createServer: () => {
      const server = new McpServer({ name: 'asks', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.registerTool('asks', {}, async (extra) => run(server, extra));
      return server;
    },
    tasks: createTasks({ taskAfterMs: 0, tools: { asks: 'optional' }, pollIntervalMs: 50, ...tasks }),
  });
}
