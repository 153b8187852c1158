/**
 * The client's view of a JSON-RPC message. Messages are classified by src/jsonrpc/message.ts (the
 * classifier the server uses too) and media types parsed by src/http/media-type.ts.
 */

export type { RequestId } from '../jsonrpc/message.js';

/** A JSON-RPC message as the transport sees it: only the fields it routes on are typed. */
export interface WireMessage {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}
