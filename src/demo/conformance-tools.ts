/**
 * The tools the official conformance server suite (0.1.16) calls by name.
 * Names, argument shapes and returned content follow the suite's scenario
 * descriptions; elicitation tools live in elicitation-fixtures.ts.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  CreateMessageResultSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { registerSharedTools, type SharedTool, sharedTool } from '../server/shared-tools.js';
import { trackLogLevel } from './log-level.js';
import { PNG_BASE64, WAV_BASE64 } from './media.js';
import { sleep } from './sleep.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

/** The SEP-1613 schema, which tools/list must hand back byte-for-byte. */
const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
  additionalProperties: false,
} as const;

/**
 * A zod schema that validates the same inputs as JSON_SCHEMA_2020_12 but
 * advertises that schema verbatim. McpServer renders zod schemas with a
 * draft-07 target (which would rename `$defs` and rewrite `$schema`); zod's
 * documented `_zod.toJSONSchema` override hook lets us keep McpServer's normal
 * list/validate path instead of replacing its tools/list handler.
 */
function verbatimSchema2020(): z.ZodType {
  const address = z.object({ street: z.string().optional(), city: z.string().optional() });
  const schema = z.strictObject({ name: z.string().optional(), address: address.optional() });
  schema._zod.toJSONSchema = () => structuredClone(JSON_SCHEMA_2020_12);
  return schema;
}

// Built once and shared by every session's server (README "Memory per session").
const VERBATIM_2020 = verbatimSchema2020();
const SAMPLING_INPUT = z.object({ prompt: z.string().describe('The prompt to send to the LLM') });

async function progress(extra: Extra, value: number, total: number): Promise<void> {
  const token = extra._meta?.progressToken;
  if (token === undefined) return;
  await extra.sendNotification({
    method: 'notifications/progress',
    params: { progressToken: token, progress: value, total },
  });
}

// Built once for every session's server (server/shared-tools.ts): no zod schemas or tool records per server.
const CONFORMANCE_TOOLS_A: readonly SharedTool[] = [
  sharedTool('test_simple_text', { description: 'Returns a simple text response' }, () =>
    text('This is a simple text response for testing.'),
  ),
  sharedTool('test_image_content', { description: 'Returns a small PNG image' }, () => ({
    content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }],
  })),
  sharedTool('test_audio_content', { description: 'Returns a short WAV clip' }, () => ({
    content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }],
  })),
  sharedTool('test_embedded_resource', { description: 'Returns an embedded text resource' }, () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  })),
  sharedTool(
    'test_multiple_content_types',
    { description: 'Returns text, image and resource content together' },
    () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  ),
];

const CONFORMANCE_TOOLS_B: readonly SharedTool[] = [
  sharedTool('test_error_handling', { description: 'Always fails with a tool error' }, () => ({
    isError: true,
    content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
  })),
  sharedTool(
    'test_tool_with_progress',
    { description: 'Reports progress 0, 50, 100 of 100' },
    async (extra) => {
      await progress(extra, 0, 100);
      await sleep(50, extra.signal);
      await progress(extra, 50, 100);
      await sleep(50, extra.signal);
      await progress(extra, 100, 100);
      return text('Tool with progress executed successfully');
    },
  ),
  sharedTool(
    'test_sampling',
    {
      description: 'Asks the client to sample an LLM completion',
      inputSchema: SAMPLING_INPUT,
    },
    async ({ prompt }, extra) => {
      const result = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
        },
        CreateMessageResultSchema,
      );
      const reply = result.content.type === 'text' ? result.content.text : `[${result.content.type}]`;
      return text(`LLM response: ${reply}`);
    },
  ),
  sharedTool(
    'json_schema_2020_12_tool',
    { description: 'Tool with JSON Schema 2020-12 features', inputSchema: VERBATIM_2020 },
    (args) => text(`Received: ${JSON.stringify(args)}`),
  ),
];

export function registerConformanceTools(server: McpServer): void {
  const shouldLog = trackLogLevel(server);
  const log = async (extra: Extra, data: string): Promise<void> => {
    if (!shouldLog('info')) return;
    // Related to the request, so the transport can put it on that request's stream.
    await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
  };
  registerSharedTools(server, CONFORMANCE_TOOLS_A);
  // Per server: it reads this session's log level (logging/setLevel).
  server.registerTool(
    'test_tool_with_logging',
    { description: 'Sends log messages while it runs' },
    async (extra) => {
      await log(extra, 'Tool execution started');
      await sleep(50, extra.signal);
      await log(extra, 'Tool processing data');
      await sleep(50, extra.signal);
      await log(extra, 'Tool execution completed');
      return text('Tool with logging executed successfully');
    },
  );

  registerSharedTools(server, CONFORMANCE_TOOLS_B);
}
