/**
 * Conformance tools that ask the client for input (`elicitation/create`).
 * Requests go through `extra.sendRequest` so the transport can route them on
 * the originating POST's SSE stream — the client only answers them there or
 * on its GET stream, and the conformance scenarios watch for them mid-call.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  type ElicitRequest,
  ElicitResultSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { registerSharedTools, type SharedTool, sharedTool } from '../server/shared-tools.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type RequestedSchema = ElicitRequest['params'] extends infer P
  ? P extends { requestedSchema: infer S }
    ? S
    : never
  : never;

async function elicit(
  extra: Extra,
  message: string,
  requestedSchema: RequestedSchema,
): Promise<{ action: string; content: unknown }> {
  const result = await extra.sendRequest(
    { method: 'elicitation/create', params: { message, requestedSchema } },
    ElicitResultSchema,
  );
  return { action: result.action, content: result.content ?? {} };
}

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

// SEP-1034: one field per primitive type, each with a default the client may pre-fill.
const DEFAULTS_SCHEMA: RequestedSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Your name', default: 'John Doe' },
    age: { type: 'integer', description: 'Your age', default: 30 },
    score: { type: 'number', description: 'Your score', default: 95.5 },
    status: {
      type: 'string',
      description: 'Account status',
      enum: ['active', 'inactive', 'pending'],
      default: 'active',
    },
    verified: { type: 'boolean', description: 'Verified account', default: true },
  },
};

// SEP-1330: the five enum encodings a 2025-11-25 client must understand.
const ENUMS_SCHEMA: RequestedSchema = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
};

// Built once and shared by every session's server (README "Memory per session").
const ELICITATION_INPUT = z.object({ message: z.string().describe('The message to show the user') });

// Built once for every session's server (server/shared-tools.ts): no zod schemas or tool records per server.
const ELICITATION_TOOLS: readonly SharedTool[] = [
  sharedTool(
    'test_elicitation',
    {
      description: 'Asks the client for a username and email via elicitation',
      inputSchema: ELICITATION_INPUT,
    },
    async ({ message }, extra) => {
      const answer = await elicit(extra, message, {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      });
      return text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content)}`);
    },
  ),
  sharedTool(
    'test_elicitation_sep1034_defaults',
    { description: 'Elicitation whose fields carry default values (SEP-1034)' },
    async (extra) => {
      const answer = await elicit(extra, 'Please review and update the form fields', DEFAULTS_SCHEMA);
      return text(
        `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content)}`,
      );
    },
  ),
  sharedTool(
    'test_elicitation_sep1330_enums',
    { description: 'Elicitation using every enum schema variant (SEP-1330)' },
    async (extra) => {
      const answer = await elicit(extra, 'Please pick from the options', ENUMS_SCHEMA);
      return text(
        `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content)}`,
      );
    },
  ),
];

export function registerElicitationFixtures(server: McpServer): void {
  registerSharedTools(server, ELICITATION_TOOLS);
}
