/**
 * Tools defined once and registered into every session's `McpServer`.
 *
 * Why: Sluice creates one `McpServer` per session (the SDK binds a server to one transport), and the
 * usual `registerTool(name, { inputSchema: { text: z.string() } }, …)` written inside the factory
 * builds every zod schema again for each session, then the SDK wraps the raw shape in a fresh
 * `z.object`. zod 4 schemas are large objects (a `.describe()`d field is a clone): for `sluice
 * serve`'s demo server that was most of its ~110 KiB per idle session. A `SharedTool` holds its
 * schemas, already wrapped as objects, from module load on; registering it costs the SDK's own
 * small per-tool record and nothing more.
 *
 * ```ts
 * const echo = sharedTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text }] }));
 * const createServer = () => { const s = new McpServer(info); registerSharedTools(s, [echo]); return s; };
 * ```
 *
 * A handler must not close over one session's server: it gets that session's `extra` per call.
 *
 * One record for every server. The SDK's `registerTool` makes a record per server holding four
 * closures over that server (`enable`, `disable`, `update`, `remove`). With a server per request
 * (the 2026-07-28 era, stateless mode) V8 soon pretenures that record's allocation site, and each
 * record, dead in the old generation, kept its server and everything the server reached alive
 * through every scavenge until a full collection: 8.6–9.1 KB promoted per call, scavenges a fifth
 * of the call's CPU (docs/benchmarks.md, "A server per request: the SDK's tool record"). So a
 * shared tool's first registration (per McpServer class) goes through `registerTool`, which also
 * runs the SDK's name check; the record it made is copied once, without the closures, and that
 * frozen copy is what every later server's tool table holds. Its `enable`/`disable`/`update`/
 * `remove` throw SharedToolError: one record cannot change one server's tools. The copy is used
 * only when the SDK's record has exactly the fields this module knows, and the server the tool
 * table and hooks it expects; otherwise every registration goes through `registerTool`.
 */
import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  type AnySchema,
  objectFromShape,
  type ZodRawShapeCompat,
} from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { AlreadyRegisteredError, SharedToolError } from '../errors.js';
import { CHANGERS, internalsOf, SharedRecords } from './shared-record.js';

/** The config `registerTool` takes, with `inputSchema`/`outputSchema` as a raw shape or a zod schema. */
export interface SharedToolConfig<I extends undefined | ZodRawShapeCompat | AnySchema> {
  title?: string;
  description?: string;
  inputSchema?: I;
  outputSchema?: ZodRawShapeCompat | AnySchema;
  annotations?: ToolAnnotations;
  _meta?: Record<string, unknown>;
}

/** A tool ready to be registered into any number of servers; build it once, at module level. */
export interface SharedTool {
  readonly name: string;
  readonly config: Readonly<SharedToolConfig<AnySchema | undefined>>;
  readonly handler: ToolCallback<AnySchema>;
}

function isSchema(v: object): boolean {
  // zod 4 schemas carry `_zod`, zod 3 schemas `_def`; anything else is a raw shape.
  return '_zod' in v || '_def' in v;
}

function asSchema(v: ZodRawShapeCompat | AnySchema | undefined): AnySchema | undefined {
  if (v === undefined) return undefined;
  return isSchema(v) ? (v as AnySchema) : (objectFromShape(v as ZodRawShapeCompat) as AnySchema);
}

/** Defines a tool once: its schemas are built (a raw shape wrapped as an object) here, not per session. */
export function sharedTool<I extends undefined | ZodRawShapeCompat | AnySchema = undefined>(
  name: string,
  config: SharedToolConfig<I>,
  handler: ToolCallback<I>,
): SharedTool {
  const inputSchema = asSchema(config.inputSchema);
  const outputSchema = asSchema(config.outputSchema);
  const built = { ...config } as Record<string, unknown>;
  if (inputSchema === undefined) delete built['inputSchema'];
  else built['inputSchema'] = inputSchema;
  if (outputSchema === undefined) delete built['outputSchema'];
  else built['outputSchema'] = outputSchema;
  return Object.freeze({
    name,
    config: Object.freeze(built) as SharedToolConfig<AnySchema | undefined>,
    handler: handler as unknown as ToolCallback<AnySchema>,
  });
}

/** The record's data fields (SDK 1.32: `_createRegisteredTool`), copied into the shared record. */
const DATA_FIELDS = [
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
  'execution',
  '_meta',
  'handler',
  'enabled',
] as const;

const records = new SharedRecords<SharedTool>(
  DATA_FIELDS,
  CHANGERS,
  (t, op) => new SharedToolError(t.name, op),
);

/** What registerSharedTools uses of an SDK v1 McpServer beyond its public API. */
interface ToolTable {
  _registeredTools: Record<string, unknown>;
  setToolRequestHandlers(): void;
  sendToolListChanged(): void;
}

function tableOf(server: McpServer): ToolTable | undefined {
  return internalsOf(server, ['_registeredTools'], ['setToolRequestHandlers', 'sendToolListChanged']) as
    | ToolTable
    | undefined;
}

/** Registers shared tools into one session's server (call it in `createServer`). */
export function registerSharedTools(server: McpServer, tools: readonly SharedTool[]): void {
  const table = tableOf(server);
  const proto = Object.getPrototypeOf(server) as object | null;
  if (table === undefined || proto === null) {
    for (const t of tools) server.registerTool(t.name, t.config as never, t.handler as never);
    return;
  }
  const known = records.of(proto);
  let installed = false;
  for (const t of tools) {
    const r = known.get(t);
    if (r === undefined || r === null) {
      // The first registration for this class (and every one when the record did not fit).
      const made = server.registerTool(t.name, t.config as never, t.handler as never);
      if (r === undefined) known.set(t, records.copy(t, made));
      continue;
    }
    // As registerTool: a name is registered once per server.
    if (table._registeredTools[t.name] !== undefined) throw new AlreadyRegisteredError('Tool', t.name);
    table._registeredTools[t.name] = r;
    installed = true;
  }
  if (installed) {
    table.setToolRequestHandlers();
    table.sendToolListChanged();
  }
}
