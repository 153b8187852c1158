/**
 * Prompts defined once and registered into every session's `McpServer`, as `sharedTool` does for
 * tools (shared-tools.ts). The SDK's `registerPrompt` wraps the argument shape in a fresh
 * `z.object` per server and makes a record with four closures over that server; a shared prompt's
 * record is made once, on a throwaway SDK `McpServer` of the same copy (shared-record.ts; a
 * subclass gets the SDK's call per server), and every server's prompt table holds that frozen copy. Its `enable`/`disable`/`update`/`remove` throw
 * `SharedRecordError`: register a prompt that must change per server with `registerPrompt`.
 *
 * ```ts
 * const greet = sharedPrompt('greet', { argsSchema: { name: z.string() } }, ({ name }) => ({ messages: [...] }));
 * const createServer = () => { const s = new McpServer(info); registerSharedPrompts(s, [greet]); return s; };
 * ```
 */
import type { McpServer, PromptCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { SharedRecordError } from '../errors.js';
import { CHANGERS, SharedRecords } from './shared-record.js';

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

/** What registerSharedPrompts uses of an SDK v1 McpServer beyond its public API. */
interface PromptTable {
  _registeredPrompts: Record<string, unknown>;
  setPromptRequestHandlers(): void;
  setCompletionRequestHandler(): void;
  sendPromptListChanged(): void;
}

function tableOf(server: McpServer): PromptTable | undefined {
  const t = server as unknown as Partial<PromptTable>;
  return typeof t._registeredPrompts === 'object' &&
    t._registeredPrompts !== null &&
    typeof t.setPromptRequestHandlers === 'function' &&
    typeof t.setCompletionRequestHandler === 'function' &&
    typeof t.sendPromptListChanged === 'function'
    ? (t as PromptTable)
    : undefined;
}

function register(server: McpServer, p: SharedPrompt): unknown {
  return server.registerPrompt(p.name, p.config as never, p.callback as never);
}

/** Registers shared prompts into one session's server (call it in `createServer`). */
export function registerSharedPrompts(server: McpServer, prompts: readonly SharedPrompt[]): void {
  const table = tableOf(server);
  const proto = Object.getPrototypeOf(server) as object | null;
  let installed = false;
  let completion = false;
  for (const p of prompts) {
    const learnt =
      table === undefined || proto === null
        ? null
        : records.learn(proto, p, (probe) => register(probe as McpServer, p));
    if (table === undefined || learnt === null) {
      register(server, p);
      continue;
    }
    // As registerPrompt: a name is registered once per server.
    if (table._registeredPrompts[p.name] !== undefined)
      throw new Error(`Prompt ${p.name} is already registered`);
    table._registeredPrompts[p.name] = learnt.record;
    completion ||= learnt.completion;
    installed = true;
  }
  if (table !== undefined && installed) {
    table.setPromptRequestHandlers();
    if (completion) table.setCompletionRequestHandler();
    table.sendPromptListChanged();
  }
}
