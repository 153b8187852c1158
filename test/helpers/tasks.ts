/**
 * A server with task tools for the tasks tests, and the requests a client of the tasks extension
 * sends: `slow` (waits for its gate or its `ms`, honours its AbortSignal), `progress` (reports
 * progress, then waits for its gate), `chatty` (a log message and two deltas of partial output,
 * then waits for its gate), `fails` (a tool error), `ask` (two elicitations at once as
 * an MRTR round, then echoes the answers), `sampler` (asks for sampling, which the tests' client
 * never declares: the transport turns that into a -32021 protocol error), `greet` (never a task).
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { mrtrInput } from '../../src/modern/mrtr.js';
import {
  type AuthResult,
  type CreateServer,
  partialResults,
  type Served,
  serve,
  type TaskService,
} from '../../src/server/index.js';
import type { Loose } from './http.js';
import { modernBody, modernSend } from './modern.js';

export const EXT = 'io.modelcontextprotocol/tasks';

export const TASK_TOOLS = {
  slow: 'optional',
  progress: 'optional',
  chatty: 'optional',
  fails: 'optional',
  ask: 'optional',
  sampler: 'optional',
  must: 'required',
} as const;

export interface ToolProbe {
  /** Gates of `slow`/`progress` calls now running: call to let one answer. */
  gates: Map<string, () => void>;
  /** Gates whose handler saw its AbortSignal fire. */
  aborted: string[];
  /** Handler runs per gate, and `ask` rounds per answers (a task must never run twice). */
  runs: Map<string, number>;
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

export function taskServer(probe: ToolProbe): CreateServer {
  return () => {
    const server = new McpServer(
      { name: 'tasks-test', version: '1.0.0' },
      { capabilities: { tools: {}, logging: {} } },
    );
    const wait = (gate: string, ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        probe.runs.set(gate, (probe.runs.get(gate) ?? 0) + 1);
        // Child-process instances (task-node.ts) log every run start, so a test sees runs across processes.
        const log = process.env['SLUICE_TASK_RUNLOG'];
        if (log !== undefined) appendFileSync(log, `${gate}\n`);
        const t = ms > 0 ? setTimeout(resolve, ms) : undefined;
        probe.gates.set(gate, () => {
          clearTimeout(t);
          resolve();
        });
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(t);
            probe.aborted.push(gate);
            reject(new Error('aborted'));
          },
          { once: true },
        );
      }).finally(() => probe.gates.delete(gate));
    server.registerTool(
      'slow',
      { inputSchema: { gate: z.string(), ms: z.number().optional() } },
      async ({ gate, ms }, extra) => {
        await wait(gate, ms ?? 0, extra.signal);
        return text(`done ${gate}`);
      },
    );
    server.registerTool('must', { inputSchema: { gate: z.string() } }, async ({ gate }) =>
      text(`must ${gate}`),
    );
    server.registerTool('progress', { inputSchema: { gate: z.string() } }, async ({ gate }, extra) => {
      const token = extra._meta?.progressToken ?? `p-${gate}`;
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: 1, total: 3, message: `step 1 of ${gate}` },
      });
      await wait(gate, 0, extra.signal);
      return text(`progressed ${gate}`);
    });
    server.registerTool('chatty', { inputSchema: { gate: z.string() } }, async ({ gate }, extra) => {
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', data: `starting ${gate}` },
      });
      const out = partialResults(extra);
      await out.text('Hello, ');
      await out.text(gate);
      await wait(gate, 0, extra.signal);
      return text(`Hello, ${gate}`);
    });
    server.registerTool(
      'sampler',
      {},
      async () =>
        ({
          resultType: 'input_required',
          inputRequests: {
            s: {
              method: 'sampling/createMessage',
              params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 },
            },
          },
        }) as unknown as ReturnType<typeof text>,
    );
    server.registerTool('fails', {}, async () => ({ ...text('it went wrong'), isError: true }));
    server.registerTool('greet', { inputSchema: { name: z.string() } }, async ({ name }) =>
      text(`Hello, ${name}!`),
    );
    server.registerTool('ask', {}, async (extra) => {
      const input = mrtrInput(extra);
      const answers = input.inputResponses;
      if (answers === undefined) {
        const ask = (message: string) => ({
          method: 'elicitation/create',
          params: {
            message,
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: [] },
          },
        });
        return {
          resultType: 'input_required',
          inputRequests: { first: ask('first?'), second: ask('second?') },
          requestState: 'round-1',
        } as unknown as ReturnType<typeof text>;
      }
      const names = ['first', 'second'].map((k) => (answers[k] as Loose | undefined)?.content?.name ?? '?');
      // The answered round, counted by its answers (a round must run once, wherever it resumed).
      const round = `ask ${names.join(',')}`;
      probe.runs.set(round, (probe.runs.get(round) ?? 0) + 1);
      return text(`answers ${names.join(',')} state ${input.requestState}`);
    });
    return server as unknown as ReturnType<CreateServer>;
  };
}

/**
 * `taskServer(probe)` served on 127.0.0.1:0 with `tasks`, each request's principal its `x-user`
 * header (alice without one).
 */
export function serveTaskTools(probe: ToolProbe, tasks: TaskService): Promise<Served> {
  return serve({
    createServer: taskServer(probe),
    port: 0,
    host: '127.0.0.1',
    keepaliveMs: 0,
    authenticate: (req): AuthResult => ({ principal: String(req.headers['x-user'] ?? 'alice') }),
    tasks,
  });
}

export function newProbe(): ToolProbe {
  return { gates: new Map(), aborted: [], runs: new Map() };
}

/** `_meta` of a client that declared the extension (and elicitation). */
export const DECLARED = {
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [EXT]: {} } },
};

export function callBody(name: string, args: Record<string, unknown> = {}, declared = true): Loose {
  return modernBody('tools/call', { name, arguments: args }, declared ? DECLARED : {});
}

export function taskBody(method: string, params: Record<string, unknown>, declared = true): Loose {
  return modernBody(method, params, declared ? DECLARED : {});
}

/** Creates a task; returns its CreateTaskResult. */
export async function createTask(
  url: string,
  name: string,
  args: Record<string, unknown>,
  more: Record<string, string> = {},
): Promise<Loose> {
  const r = await modernSend(url, callBody(name, args), more);
  if (r.status !== 200 || r.json().result?.resultType !== 'task') {
    throw new Error(`no task created: ${r.status} ${r.text}`);
  }
  return r.json().result;
}

export async function getTask(
  url: string,
  taskId: string,
  more: Record<string, string> = {},
): Promise<Loose> {
  const r = await modernSend(url, taskBody('tasks/get', { taskId }), more);
  return r.json();
}

/** Polls tasks/get until `pred` holds (bounded). */
export async function pollTask(
  url: string,
  taskId: string,
  pred: (t: Loose) => boolean,
  ms = 10_000,
  more: Record<string, string> = {},
): Promise<Loose> {
  const deadline = Date.now() + ms;
  let last: Loose | undefined;
  while (Date.now() < deadline) {
    last = await getTask(url, taskId, more);
    if (last.result !== undefined && pred(last.result)) return last.result;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`task ${taskId} never matched within ${ms} ms; last: ${JSON.stringify(last)}`);
}
