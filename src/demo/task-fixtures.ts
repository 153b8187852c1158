/**
 * The tools the conformance suite's `tasks-*` scenarios (0.2.0-alpha.12, SEP-2663) call on
 * `sluice serve`, and their task policies. The tools themselves know nothing of tasks: Sluice's
 * task service (src/tasks/) runs them as tasks by the policy below.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { isPlainObject as isObject } from '../jsonrpc/message.js';
import { mrtrInput } from '../modern/mrtr.js';
import { toolError } from '../modern/tool-error.js';
import type { TaskPolicy } from '../server/index.js';
import { registerSharedTools, type SharedTool, sharedTool } from '../server/shared-tools.js';
import { sleep } from './sleep.js';

/**
 * Which demo tools run as tasks (`greet` never does). `reindex` and `generate` (demo-tools.ts) are
 * the long calls tasks exist for: tasks when the client declared the extension, plain otherwise.
 */
export const DEMO_TASK_TOOLS: Readonly<Record<string, TaskPolicy>> = {
  reindex: 'optional',
  generate: 'optional',
  slow_compute: 'optional',
  failing_job: 'required',
  // The suite's fixture contract: it always creates a task. It fails at once, so as an optional
  // tool it would be answered directly (taskAfterMs).
  protocol_error_job: 'required',
  confirm_delete: 'optional',
  multi_input: 'optional',
  test_tool_with_task: 'required',
};

/** Tools whose MRTR rounds before the first answer are plain calls; the task starts with the answers. */
export const DEMO_INPUT_FIRST_TOOLS: readonly string[] = ['test_tool_with_task'];

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

function inputRequired(inputRequests: Record<string, unknown>): CallToolResult {
  return { resultType: 'input_required', inputRequests } as unknown as CallToolResult;
}

const elicit = (message: string, props: Record<string, unknown>) => ({
  method: 'elicitation/create',
  params: { message, requestedSchema: { type: 'object', properties: props } },
});

function answered(r: unknown, key: string): unknown {
  return isObject(r) && r['action'] === 'accept' && isObject(r['content']) ? r['content'][key] : undefined;
}

// Built once for every session's server (server/shared-tools.ts): no zod schemas or tool records per server.
const TASK_TOOLS: readonly SharedTool[] = [
  sharedTool(
    'greet',
    { description: 'Greets (never a task)', inputSchema: { name: z.string() } },
    async ({ name }) => text(`Hello, ${name}!`),
  ),
  sharedTool(
    'slow_compute',
    {
      description: 'Sleeps `seconds`, then answers (a task; cancellable)',
      inputSchema: { seconds: z.number().min(0).max(600), label: z.string().optional() },
    },
    async ({ seconds, label }, extra) => {
      const finished = await sleep(seconds * 1000, extra.signal);
      return text(finished ? `computed ${label ?? ''} after ${seconds}s` : 'cancelled');
    },
  ),
  sharedTool('failing_job', { description: 'A tool error after about a second (a task)' }, async (extra) => {
    await sleep(1000, extra.signal);
    return { ...text('failing_job failed, as it always does'), isError: true };
  }),
  sharedTool('protocol_error_job', { description: 'A protocol error (the task fails)' }, async () =>
    toolError(JsonRpcCode.InternalError, 'protocol_error_job: internal failure, on purpose'),
  ),
  sharedTool(
    'confirm_delete',
    {
      description: 'Asks for confirmation (elicitation), then deletes',
      inputSchema: { filename: z.string() },
    },
    async ({ filename }, extra) => {
      const r = mrtrInput(extra).inputResponses?.['confirm'];
      if (r === undefined) {
        return inputRequired({ confirm: elicit(`Delete ${filename}?`, { confirm: { type: 'boolean' } }) });
      }
      return text(answered(r, 'confirm') === true ? `deleted ${filename}` : `kept ${filename}`);
    },
  ),
  sharedTool('multi_input', { description: 'Asks two questions at once' }, async (extra) => {
    const responses = mrtrInput(extra).inputResponses;
    if (responses === undefined) {
      return inputRequired({
        name: elicit('Your name?', { name: { type: 'string' } }),
        confirm: elicit('Confirm?', { confirm: { type: 'boolean' } }),
      });
    }
    return text(
      `name ${String(answered(responses['name'], 'name'))}, confirm ${String(answered(responses['confirm'], 'confirm'))}`,
    );
  }),
  sharedTool(
    'test_tool_with_task',
    { description: 'Asks for user_name as a plain MRTR round, then runs as a task with the answer' },
    async (extra) => {
      const r = mrtrInput(extra).inputResponses?.['user_name'];
      if (r === undefined)
        return inputRequired({ user_name: elicit('Your name?', { name: { type: 'string' } }) });
      return text(`Hello, ${String(answered(r, 'name'))}, from a task`);
    },
  ),
];

export function registerTaskFixtures(server: McpServer): void {
  registerSharedTools(server, TASK_TOOLS);
}
