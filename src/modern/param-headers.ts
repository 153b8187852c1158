/**
 * `Mcp-Param-{Name}` headers: tool parameters a server marks with `x-mcp-header` in its
 * `inputSchema` are mirrored into headers by the client, and the server checks that each header
 * matches the body (MCP 2026-07-28 basic/transports/streamable-http §"Custom Headers from Tool
 * Parameters"). A value present in the arguments needs its header; a null or absent value needs
 * none. Integers compare as numbers, booleans as `true`/`false`, strings exactly (after decoding
 * the Base64 sentinel). The rules and the encoding live in http/param-headers.ts, shared with the client.
 */
import { checkParamHeaderValues, type ParamHeaderDecl, paramHeaderDecls } from '../http/param-headers.js';
import type { RequestId } from '../jsonrpc/message.js';
import { type ModernRefusal, ModernRefusals } from './refusal.js';
import type { HeaderLookup } from './validate.js';

/** A declaration in force: the `x-mcp-header` name and the chain of `properties` keys (http/param-headers.ts). */
export type HeaderDecl = ParamHeaderDecl;

/**
 * The declarations of one tool's input schema, by the rules the client mirrors with (http/param-headers.ts):
 * a tool whose declarations are invalid has none in force, since a conforming client excludes it and never
 * sends its headers.
 */
export function headerDeclsOf(inputSchema: unknown): HeaderDecl[] {
  const found = paramHeaderDecls(inputSchema);
  return found.ok ? [...found.decls] : [];
}

/** Checks the `Mcp-Param-*` headers of one tools/call against its arguments. */
export function checkParamHeaders(
  id: RequestId,
  decls: readonly HeaderDecl[],
  args: unknown,
  header: HeaderLookup,
): ModernRefusal | undefined {
  const p = checkParamHeaderValues(decls, args, header);
  if (p === undefined) return undefined;
  if (p.problem === 'missing') {
    return ModernRefusals.headerMismatch(
      id,
      `the ${p.header} header is required (argument ${p.argument} is set)`,
    );
  }
  if (p.problem === 'malformed')
    return ModernRefusals.headerMismatch(id, `${p.header} header ${p.detail ?? ''}`);
  return ModernRefusals.headerMismatch(id, `${p.header} header does not match argument ${p.argument}`);
}
