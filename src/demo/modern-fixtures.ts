/**
 * The fixtures the official conformance suite (0.2.0-alpha.12, `--requirements 2026-07-28`) calls
 * by name: MRTR tools and prompt (`input_required` results, MCP 2026-07-28 basic/patterns/mrtr),
 * the capability probe, a logging tool, list-change triggers and an `x-mcp-header` tool. Names,
 * keys and texts follow the suite's scenario descriptions. Legacy sessions see the same tools.
 */

import { randomBytes } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { JsonRpcCode } from '../jsonrpc/codes.js';
import { META_CLIENT_CAPABILITIES } from '../jsonrpc/meta-keys.js';
import { mrtrInput } from '../modern/mrtr.js';
import { toolError } from '../modern/tool-error.js';
import { createRequestStateCodec, type RequestStateCodec } from '../server/request-state.js';
import { registerSharedPrompts, type SharedPrompt, sharedPrompt } from '../server/shared-prompts.js';
import { registerSharedTools, type SharedTool, sharedTool } from '../server/shared-tools.js';

/**
 * One secret per process: a multi-instance deployment would share one (SLUICE_STATE_SECRET). Made on
 * first use, not at module load: Workers forbid generating random values in global scope.
 */
let sharedCodec: RequestStateCodec | undefined;
function codec(): RequestStateCodec {
  sharedCodec ??= createRequestStateCodec({
    secret: process.env['SLUICE_STATE_SECRET'] ?? randomBytes(32).toString('hex'),
  });
  return sharedCodec;
}

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

function inputRequired(inputRequests: Record<string, unknown>, requestState?: string): CallToolResult {
  const r: Record<string, unknown> = { resultType: 'input_required', inputRequests };
  if (requestState !== undefined) r['requestState'] = requestState;
  return r as unknown as CallToolResult;
}

const elicit = (message: string, prop: string, type = 'string') => ({
  method: 'elicitation/create',
  params: {
    message,
    requestedSchema: { type: 'object', properties: { [prop]: { type } }, required: [prop] },
  },
});
const sample = (question: string, maxTokens: number) => ({
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: question } }], maxTokens },
});
const ROOTS = { method: 'roots/list', params: {} };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
/** `content[key]` of an accepted elicitation response, if it is one. */
function elicited(r: unknown, key: string): string | undefined {
  if (!isObject(r) || r['action'] !== 'accept' || !isObject(r['content'])) return undefined;
  const v = r['content'][key];
  return typeof v === 'string' ? v : v === undefined ? undefined : JSON.stringify(v);
}
function sampledText(r: unknown): string | undefined {
  if (!isObject(r) || !isObject(r['content'])) return undefined;
  const t = r['content']['text'];
  return typeof t === 'string' ? t : undefined;
}

// Built once for every session's server (server/shared-tools.ts): no zod schemas or tool records per server.
const MODERN_TOOLS_A: readonly SharedTool[] = [
  // The transport's capability gate answers -32021 when the client did not declare sampling.
  sharedTool(
    'test_missing_capability',
    { description: 'Needs the client sampling capability (answers -32021 without it)' },
    async (extra) => {
      const { inputResponses } = mrtrInput(extra);
      const answer = sampledText(inputResponses?.['probe']);
      if (answer !== undefined) return text(`sampled: ${answer}`);
      return inputRequired({ probe: sample('Say hello', 20) });
    },
  ),
  sharedTool(
    'test_streaming_elicitation',
    { description: 'Answers on its own stream, never with a server request' },
    async () => text('streamed without server-to-client requests'),
  ),
  sharedTool(
    'test_logging_tool',
    { description: 'Logs at every level (only sent when _meta asks for a level)' },
    async (extra) => {
      for (const level of ['debug', 'info', 'warning', 'error'] as const) {
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level, logger: 'test_logging_tool', data: `a ${level} message` },
        });
      }
      return text('logged');
    },
  ),
];

const MODERN_TOOLS_B: readonly SharedTool[] = [
  sharedTool(
    'test_x_mcp_header',
    {
      description: 'Its region argument is mirrored in the Mcp-Param-Region header',
      inputSchema: { region: z.string().meta({ 'x-mcp-header': 'Region' }) },
    },
    async ({ region }) => text(`region ${region}`),
  ),
  sharedTool(
    'test_input_required_result_elicitation',
    { description: 'MRTR: one elicitation' },
    async (extra) => {
      const name = elicited(mrtrInput(extra).inputResponses?.['user_name'], 'name');
      if (name !== undefined) return text(`Hello, ${name}!`);
      return inputRequired({ user_name: elicit('What is your name?', 'name') });
    },
  ),
  sharedTool(
    'test_input_required_result_sampling',
    { description: 'MRTR: one sampling request' },
    async (extra) => {
      const answer = sampledText(mrtrInput(extra).inputResponses?.['capital_question']);
      if (answer !== undefined) return text(`The model said: ${answer}`);
      return inputRequired({ capital_question: sample('What is the capital of France?', 100) });
    },
  ),
  sharedTool('test_input_required_result_list_roots', { description: 'MRTR: roots/list' }, async (extra) => {
    const r = mrtrInput(extra).inputResponses?.['client_roots'];
    if (isObject(r) && Array.isArray(r['roots'])) {
      const uris = (r['roots'] as unknown[]).map((x) => (isObject(x) ? String(x['uri']) : '?'));
      return text(`Roots: ${uris.join(', ')}`);
    }
    return inputRequired({ client_roots: ROOTS });
  }),
  sharedTool(
    'test_input_required_result_request_state',
    { description: 'MRTR: requestState round trip' },
    async (extra) => {
      const { inputResponses, requestState } = mrtrInput(extra);
      const state = codec().open(requestState);
      if (inputResponses?.['confirm'] !== undefined && isObject(state) && state['tool'] === 'request_state') {
        return text('state-ok: confirmed');
      }
      return inputRequired(
        { confirm: elicit('Please confirm', 'ok', 'boolean') },
        codec().seal({ tool: 'request_state' }),
      );
    },
  ),
  sharedTool(
    'test_input_required_result_multiple_inputs',
    { description: 'MRTR: three inputs at once' },
    async (extra) => {
      const { inputResponses: r, requestState } = mrtrInput(extra);
      const state = codec().open(requestState);
      if (
        r !== undefined &&
        isObject(state) &&
        ['user_name', 'greeting', 'client_roots'].every((k) => r[k] !== undefined)
      ) {
        return text(
          `All inputs received: ${elicited(r['user_name'], 'name') ?? '?'} / ${sampledText(r['greeting']) ?? '?'}`,
        );
      }
      return inputRequired(
        {
          user_name: elicit('What is your name?', 'name'),
          greeting: sample('Generate a greeting', 50),
          client_roots: ROOTS,
        },
        codec().seal({ tool: 'multiple_inputs' }),
      );
    },
  ),
  sharedTool('test_input_required_result_multi_round', { description: 'MRTR: two rounds' }, async (extra) => {
    const { inputResponses: r, requestState } = mrtrInput(extra);
    const state = codec().open(requestState);
    const round = isObject(state) ? state['round'] : undefined;
    if (round === 2 && r?.['step2'] !== undefined) {
      const name = isObject(state) ? String(state['name']) : '?';
      return text(`${name} likes ${elicited(r['step2'], 'color') ?? '?'}`);
    }
    if (round === 1 && r?.['step1'] !== undefined) {
      return inputRequired(
        { step2: elicit('Step 2: What is your favorite color?', 'color') },
        codec().seal({ round: 2, name: elicited(r['step1'], 'name') ?? '?' }),
      );
    }
    return inputRequired({ step1: elicit('Step 1: What is your name?', 'name') }, codec().seal({ round: 1 }));
  }),
  sharedTool(
    'test_input_required_result_tampered_state',
    { description: 'MRTR: HMAC-checked requestState' },
    async (extra) => {
      const { requestState } = mrtrInput(extra);
      if (requestState !== undefined) {
        const state = codec().open(requestState);
        if (!isObject(state) || state['tool'] !== 'tampered_state') {
          return toolError(
            JsonRpcCode.InvalidParams,
            'Invalid params: requestState failed its integrity check',
          ) as unknown as CallToolResult;
        }
        return text('state verified');
      }
      return inputRequired(
        { confirm: elicit('Please confirm', 'ok', 'boolean') },
        codec().seal({ tool: 'tampered_state' }),
      );
    },
  ),
  sharedTool(
    'test_input_required_result_capabilities',
    { description: 'MRTR: only declared capabilities' },
    async (extra) => {
      const { inputResponses } = mrtrInput(extra);
      if (inputResponses !== undefined && Object.keys(inputResponses).length > 0)
        return text('inputs received');
      const caps = extra._meta?.[META_CLIENT_CAPABILITIES];
      const has = (c: string): boolean => isObject(caps) && isObject(caps[c]);
      const requests: Record<string, unknown> = {};
      if (has('elicitation')) requests['user_name'] = elicit('What is your name?', 'name');
      if (has('sampling')) requests['greeting'] = sample('Generate a greeting', 50);
      if (has('roots')) requests['client_roots'] = ROOTS;
      if (Object.keys(requests).length === 0) return text('the client declared no input capability');
      return inputRequired(requests);
    },
  ),
];

const MODERN_PROMPTS: readonly SharedPrompt[] = [
  sharedPrompt(
    'test_input_required_result_prompt',
    { description: 'MRTR on prompts/get' },
    (extra): GetPromptResult => {
      const ctx = elicited(mrtrInput(extra).inputResponses?.['user_context'], 'context');
      if (ctx !== undefined) {
        return { messages: [{ role: 'user', content: { type: 'text', text: `Use this context: ${ctx}` } }] };
      }
      return {
        resultType: 'input_required',
        inputRequests: { user_context: elicit('What context should the prompt use?', 'context') },
      } as unknown as GetPromptResult;
    },
  ),
];

export function registerModernFixtures(server: McpServer): void {
  registerSharedTools(server, MODERN_TOOLS_A);
  // Per server: they announce on this session's server.
  server.registerTool(
    'test_trigger_tool_change',
    { description: 'Announces a tool list change' },
    async () => {
      server.sendToolListChanged();
      return text('tool list changed');
    },
  );
  server.registerTool(
    'test_trigger_prompt_change',
    { description: 'Announces a prompt list change' },
    async () => {
      server.sendPromptListChanged();
      return text('prompt list changed');
    },
  );

  registerSharedTools(server, MODERN_TOOLS_B);

  registerSharedPrompts(server, MODERN_PROMPTS);
}
