// What `sluice call` knows about a tool before calling it: the server's tool list (all pages) and the
// coercion of `--arg k=v` strings by the tool's `inputSchema`, so `--arg text=5` stays a string when
// the schema says string, and a value that cannot be what the schema says is a usage error naming the arg.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { UsageError } from './connect.js';

/** Every tool the server lists, following nextCursor (bounded at 1000 pages). */
export async function listAllTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const result = await client.listTools(cursor !== undefined ? { cursor } : undefined);
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

/** Without a schema for the argument: integers and decimals become numbers, true/false booleans, null null,
 * a value starting with { or [ JSON when it parses; anything else stays a string. */
export function coerce(value: string): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (value === 'null') return null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(value)) {
    const n = Number(value);
    if (Number.isFinite(n) && (Number.isSafeInteger(n) || !Number.isInteger(n))) return n;
  }
  if (value.startsWith('{') || value.startsWith('[')) {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      // Not JSON after all: keep the literal string, as documented.
    }
  }
  return value;
}

function typeOf(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const t = (schema as { type?: unknown }).type;
  if (typeof t === 'string') return t;
  // ["string", "null"]: one concrete type besides null.
  if (Array.isArray(t)) {
    const concrete = t.filter((x) => x !== 'null');
    if (concrete.length === 1 && typeof concrete[0] === 'string') return concrete[0];
  }
  return undefined;
}

/** Coerces one `--arg` value by the property's JSON Schema type; falls back to `coerce` when the type is unknown. */
export function coerceBySchema(name: string, value: string, property: unknown): unknown {
  const type = typeOf(property);
  const fail = (what: string): never => {
    throw new UsageError(`--arg ${name}: the tool expects ${what}, got '${value}'`);
  };
  switch (type) {
    case 'string':
      return value;
    case 'number': {
      const n = value.trim() === '' ? Number.NaN : Number(value);
      return Number.isFinite(n) ? n : fail('a number');
    }
    case 'integer': {
      const n = value.trim() === '' ? Number.NaN : Number(value);
      return Number.isSafeInteger(n) ? n : fail('an integer');
    }
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : fail('true or false');
    case 'null':
      return value === 'null' ? null : fail('null');
    case 'object':
    case 'array': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        return fail(`a JSON ${type}`);
      }
      const ok =
        type === 'array'
          ? Array.isArray(parsed)
          : typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
      return ok ? parsed : fail(`a JSON ${type}`);
    }
    default:
      return coerce(value);
  }
}

type InputSchema = { properties?: unknown; required?: unknown; additionalProperties?: unknown } | undefined;

/** The tool's parameters: required ones first, in schema order, then the optional ones. */
export function parametersOf(tool: Tool): { required: string[]; optional: string[] } {
  const schema = tool.inputSchema as InputSchema;
  const properties = schema?.properties;
  const names = properties !== null && typeof properties === 'object' ? Object.keys(properties) : [];
  const listed = Array.isArray(schema?.required) ? (schema.required as unknown[]) : [];
  const required = names.filter((n) => listed.includes(n));
  return { required, optional: names.filter((n) => !required.includes(n)) };
}

/** `corpus [docs] [delayMs]`: required parameters as they are, optional ones in brackets. */
export function parameterSummary(tool: Tool): string {
  const { required, optional } = parametersOf(tool);
  return [...required, ...optional.map((n) => `[${n}]`)].join(' ');
}

/**
 * Applies `coerceBySchema` to each `k=v` pair, with the tool's inputSchema when the tool is known. A key the
 * schema does not list is a usage error naming the tool's parameters (a typo, far more often than an extra
 * argument the tool accepts), unless the schema allows additional properties explicitly.
 */
export function coerceArgs(
  pairs: readonly [string, string][],
  tool: Tool | undefined,
): Record<string, unknown> {
  const schema = tool?.inputSchema as InputSchema;
  const raw = schema?.properties;
  const properties = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : undefined;
  const open = schema?.additionalProperties === true || typeof schema?.additionalProperties === 'object';
  const out: Record<string, unknown> = {};
  for (const [k, v] of pairs) {
    const known = properties !== undefined && Object.hasOwn(properties, k);
    if (tool !== undefined && properties !== undefined && !known && !open) {
      const summary = parameterSummary(tool);
      throw new UsageError(
        `--arg ${k}: the tool '${tool.name}' has no parameter '${k}'; its parameters: ${summary === '' ? '(none)' : summary}`,
      );
    }
    out[k] = coerceBySchema(k, v, known ? properties?.[k] : undefined);
  }
  return out;
}

/**
 * A usage error naming the tool's required parameters that `args` (from `--args` and `--arg`, merged)
 * leaves out. Without it the call went out and came back as the server's validation text ("expected
 * string, received undefined at text"), exit 1 as if the tool had failed; the CLI has the schema and
 * can say which `--arg` to add before calling. A tool the server did not list is called as it is.
 */
export function requireArgs(args: Record<string, unknown>, tool: Tool | undefined): void {
  if (tool === undefined) return;
  const missing = parametersOf(tool).required.filter((n) => !Object.hasOwn(args, n));
  if (missing.length === 0) return;
  const add = missing.map((n) => `--arg ${n}=…`).join(' ');
  const summary = parameterSummary(tool);
  const which =
    missing.length === 1
      ? `parameter '${missing[0]}'`
      : `parameters ${missing.map((n) => `'${n}'`).join(', ')}`;
  throw new UsageError(`the tool '${tool.name}' needs the ${which}: add ${add}; its parameters: ${summary}`);
}
