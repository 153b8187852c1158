/**
 * The prompts the conformance suite lists and gets. `arg1` of
 * test_prompt_with_arguments is completable because completion-complete asks
 * for completions of exactly that argument.
 */
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { registerSharedPrompts, type SharedPrompt, sharedPrompt } from '../server/shared-prompts.js';
import { PNG_BASE64 } from './media.js';

const ARG1_SUGGESTIONS = ['test', 'testValue1', 'test-alpha', 'example'];

// Raw shapes built once; sharedPrompt wraps each in its z.object once, for every session's server.
const ARGS_SCHEMA = {
  arg1: completable(z.string().describe('First test argument'), (value) =>
    ARG1_SUGGESTIONS.filter((s) => s.startsWith(value)),
  ),
  arg2: z.string().describe('Second test argument'),
};
const EMBED_ARGS_SCHEMA = { resourceUri: z.string().describe('URI of the resource to embed') };

// Built once for every session's server (server/shared-record.ts): one record each, no closures over a server.
const CONFORMANCE_PROMPTS: readonly SharedPrompt[] = [
  sharedPrompt('test_simple_prompt', { description: 'A simple prompt without arguments' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  })),
  sharedPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two required arguments',
      argsSchema: ARGS_SCHEMA,
    },
    ({ arg1, arg2 }) => ({
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` },
        },
      ],
    }),
  ),
  sharedPrompt(
    'test_prompt_with_embedded_resource',
    {
      description: 'A prompt that embeds a resource',
      argsSchema: EMBED_ARGS_SCHEMA,
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: resourceUri,
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  ),
  sharedPrompt('test_prompt_with_image', { description: 'A prompt that includes an image' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  })),
];

export function registerConformancePrompts(server: McpServer): void {
  registerSharedPrompts(server, CONFORMANCE_PROMPTS);
}
