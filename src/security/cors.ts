/**
 * CORS for browser clients on allowed origins only. MCP needs the client to read Mcp-Session-Id
 * and to send its own headers, which a preflight must allow explicitly. 2026-07-28 clients also
 * send Mcp-Method, Mcp-Name and one Mcp-Param-{Name} per `x-mcp-header` tool parameter (MCP
 * 2026-07-28 basic/transports/streamable-http §"Request Metadata"); those names are open-ended,
 * so the preflight reflects the `mcp-param-*` names the browser asks for, and nothing else.
 */

// DPoP (RFC 9449 §4.1) beside Authorization: a browser client with a DPoP-bound token sends its
// proof in it, and reads the server's next nonce from DPoP-Nonce (§9).
const ALLOW_HEADERS =
  'Content-Type, Accept, Authorization, DPoP, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name';
const EXPOSE_HEADERS =
  'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, DPoP-Nonce, Mcp-Method, Mcp-Name';
/** An RFC 9110 token starting with mcp-param- (case-insensitive), as a preflight may request it. */
const PARAM_HEADER = /^mcp-param-[!#$%&'*+.^_`|~0-9a-z-]+$/i;
/** A preflight reflects at most this many Mcp-Param-* names. */
const MAX_PARAM_HEADERS = 64;

/** Response headers by lower-case name (the same shape as the core's `Headers`). */
type Headers = Record<string, string>;

/** Headers added to every answer for an allowed Origin. */
export function corsHeaders(origin: string): Headers {
  return {
    'access-control-allow-origin': origin,
    'access-control-expose-headers': EXPOSE_HEADERS,
    vary: 'Origin',
  };
}

/** The Mcp-Param-* names of an Access-Control-Request-Headers value, lower-cased. */
export function requestedParamHeaders(requested: string | undefined): string[] {
  if (requested === undefined) return [];
  const out: string[] = [];
  for (const raw of requested.split(',')) {
    const h = raw.trim().toLowerCase();
    if (PARAM_HEADER.test(h) && !out.includes(h)) out.push(h);
    if (out.length >= MAX_PARAM_HEADERS) break;
  }
  return out;
}

/** The answer to a preflight (OPTIONS) from an allowed origin. */
export function preflightHeaders(origin: string, methods: string, requestedHeaders?: string): Headers {
  const params = requestedParamHeaders(requestedHeaders);
  return {
    ...corsHeaders(origin),
    'access-control-allow-methods': methods,
    'access-control-allow-headers':
      params.length === 0 ? ALLOW_HEADERS : `${ALLOW_HEADERS}, ${params.join(', ')}`,
    'access-control-max-age': '600',
  };
}
