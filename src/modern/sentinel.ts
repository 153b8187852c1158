/**
 * The Base64 sentinel of `Mcp-Name` and `Mcp-Param-*` header values (MCP 2026-07-28
 * basic/transports/streamable-http §"Value Encoding"): a value that is not plain header-safe ASCII
 * travels as `=?base64?{Base64 of its UTF-8}?=`. One encoder and one strict decoder for the server
 * and the client, owned by http/param-headers.ts (browser-safe, so the client can import it).
 */
export {
  type Decoded,
  decodeHeaderValue,
  encodeHeaderValue,
  isPlainHeaderValue,
  trimOws,
} from '../http/param-headers.js';
