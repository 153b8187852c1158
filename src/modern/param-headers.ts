/**
 * `Mcp-Param-{Name}` headers: tool parameters a server marks with `x-mcp-header` in its
 * `inputSchema` are mirrored into headers by the client, and the server checks that each header
 * matches the body (MCP 2026-07-28 basic/transports/streamable-http §"Custom Headers from Tool
 * Parameters"). A value present in the arguments needs its header; a null or absent value needs
 * none. Integers compare as numbers, booleans as `true`/`false`, strings exactly (after decoding
 * the Base64 sentinel).
 */
import type { RequestId } from '../jsonrpc/message.js';
import { isPlainObject as isObject } from '../jsonrpc/message.js';
import { type ModernRefusal, ModernRefusals } from './refusal.js';
import { decodeHeaderValue } from './sentinel.js';
import type { HeaderLookup } from './validate.js';

export interface HeaderDecl {
  /** The `x-mcp-header` value; the header is `Mcp-Param-{name}`. */
  name: string;
  /** The chain of `properties` keys from the schema root. */
  path: string[];
}

/** RFC 9110 §5.6.2 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The declarations of one tool's input schema. Only statically reachable properties count (a chain
 * of `properties` keys); a name that is not a token, or repeats case-insensitively, is skipped, as
 * a conforming client drops such tools and so never sends their headers.
 */
export function headerDeclsOf(inputSchema: unknown): HeaderDecl[] {
  const out: HeaderDecl[] = [];
  const seen = new Set<string>();
  const walk = (schema: unknown, path: string[], depth: number): void => {
    if (!isObject(schema) || depth > 16) return;
    const props = schema['properties'];
    if (!isObject(props)) return;
    for (const [key, sub] of Object.entries(props)) {
      if (!isObject(sub)) continue;
      const name = sub['x-mcp-header'];
      if (typeof name === 'string' && TOKEN.test(name) && !seen.has(name.toLowerCase())) {
        seen.add(name.toLowerCase());
        out.push({ name, path: [...path, key] });
      }
      walk(sub, [...path, key], depth + 1);
    }
  };
  walk(inputSchema, [], 0);
  return out;
}

function valueAt(args: unknown, path: string[]): unknown {
  let v: unknown = args;
  for (const k of path) {
    if (!isObject(v) || !Object.hasOwn(v, k)) return undefined;
    v = v[k];
  }
  return v;
}

function matches(header: string, body: unknown): boolean {
  if (typeof body === 'string') return header === body;
  if (typeof body === 'boolean') return header === String(body);
  if (typeof body === 'number') {
    // Numerically, so `42.0` matches 42 (spec §"Server Validation" note).
    if (!/^-?\d+(?:\.0+)?$/.test(header)) return false;
    return Number(header) === body;
  }
  return false;
}

/** Checks the `Mcp-Param-*` headers of one tools/call against its arguments. */
export function checkParamHeaders(
  id: RequestId,
  decls: readonly HeaderDecl[],
  args: unknown,
  header: HeaderLookup,
): ModernRefusal | undefined {
  for (const d of decls) {
    const body = valueAt(args, d.path);
    if (body === undefined || body === null) continue;
    const raw = header(`mcp-param-${d.name.toLowerCase()}`);
    if (raw === undefined) {
      return ModernRefusals.headerMismatch(
        id,
        `the Mcp-Param-${d.name} header is required (argument ${d.path.join('.')} is set)`,
      );
    }
    const dec = decodeHeaderValue(raw);
    if (!dec.ok) return ModernRefusals.headerMismatch(id, `Mcp-Param-${d.name} header ${dec.reason}`);
    if (!matches(dec.value, body)) {
      return ModernRefusals.headerMismatch(
        id,
        `Mcp-Param-${d.name} header does not match argument ${d.path.join('.')}`,
      );
    }
  }
  return undefined;
}
