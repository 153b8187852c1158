/**
 * Prompts defined once and registered into every session's `McpServer`, as `sharedTool` does for
 * tools (shared-tools.ts). The SDK's `registerPrompt` wraps the argument shape in a fresh
 * `z.object` per server and makes a record with four closures over that server; a shared prompt's
 * record is made once, on a throwaway SDK `McpServer` of the same copy (shared-record.ts; a
 * subclass gets the SDK's call per server), and every server's prompt table holds that frozen
 * copy. Its `enable`/`disable`/`update`/`remove` throw `SharedRecordError`: register a prompt that
 * must change per server with `registerPrompt`.
 *
 * ```ts
 * const greet = sharedPrompt('greet', { argsSchema: { name: z.string() } }, ({ name }) => ({ messages: [...] }));
 * const createServer = () => { const s = new McpServer(info); registerSharedPrompts(s, [greet]); return s; };
 * ```
 */
import type { McpServer, PromptCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { SharedRecordError } from '../errors.js';
import { CHANGERS, installShared, type Placement, SharedRecords } from './shared-record.js';

/** The config `registerPrompt` takes. */
export interface SharedPromptConfig<A extends undefined | ZodRawShapeCompat> {
  title?: string;
  description?: string;
  argsSchema?: A;
}

/** A prompt ready to be registered into any number of servers; build it once, at module level. */
export interface SharedPrompt {
  readonly name: string;
  readonly config: Readonly<SharedPromptConfig<ZodRawShapeCompat | undefined>>;
  readonly callback: PromptCallback<ZodRawShapeCompat>;
}

/** Defines a prompt once. */
export function sharedPrompt<A extends undefined | ZodRawShapeCompat = undefined>(
  name: string,
  config: SharedPromptConfig<A>,
  callback: PromptCallback<A>,
): SharedPrompt {
  return Object.freeze({
    name,
    config: Object.freeze({ ...config }) as SharedPromptConfig<ZodRawShapeCompat | undefined>,
    callback: callback as unknown as PromptCallback<ZodRawShapeCompat>,
  });
}

/** SDK 1.32 `_createRegisteredPrompt`'s data fields. */
const DATA_FIELDS = ['title', 'description', 'argsSchema', 'callback', 'enabled'] as const;

const records = new SharedRecords<SharedPrompt>(
  DATA_FIELDS,
  CHANGERS,
  (p, op) => new SharedRecordError('prompt', p.name, op),
);

/** SDK 1.32's prompt table and the methods that list and announce prompts. */
const PLACEMENT: Placement<SharedPrompt> = {
  tables: ['_registeredPrompts'],
  handlers: 'setPromptRequestHandlers',
  listChanged: 'sendPromptListChanged',
  register: (server, p) =>
    (server as McpServer).registerPrompt(p.name, p.config as never, p.callback as never),
  records: () => records,
  slot: (p) => ['_registeredPrompts', p.name, 'Prompt'],
};

/** Registers shared prompts into one session's server (call it in `createServer`). */
export function registerSharedPrompts(server: McpServer, prompts: readonly SharedPrompt[]): void {
  installShared(server, prompts, PLACEMENT);
}
