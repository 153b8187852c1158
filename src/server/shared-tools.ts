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
 */
import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  type AnySchema,
  objectFromShape,
  type ZodRawShapeCompat,
} from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';

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

/** Registers shared tools into one session's server (call it in `createServer`). */
export function registerSharedTools(server: McpServer, tools: readonly SharedTool[]): void {
  for (const t of tools) server.registerTool(t.name, t.config as never, t.handler as never);
}
