/**
 * CORS for browser clients on allowed origins only. MCP needs the client to read Mcp-Session-Id
 * and to send its own headers, which a preflight must allow explicitly.
 */

const ALLOW_HEADERS =
  'Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID';

/** Response headers by lower-case name (the same shape as the core's `Headers`). */
type Headers = Record<string, string>;

/** Headers added to every answer for an allowed Origin. */
export function corsHeaders(origin: string): Headers {
  return {
    'access-control-allow-origin': origin,
    'access-control-expose-headers': 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate',
    vary: 'Origin',
  };
}

/** The answer to a preflight (OPTIONS) from an allowed origin. */
export function preflightHeaders(origin: string, methods: string): Headers {
  return {
    ...corsHeaders(origin),
    'access-control-allow-methods': methods,
    'access-control-allow-headers': ALLOW_HEADERS,
    'access-control-max-age': '600',
  };
}
