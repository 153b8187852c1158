/**
 * RequestView: what the pipeline (and `authenticate`) sees of one HTTP request, whatever runtime
 * it arrived on. The node:http binding builds it over IncomingMessage (src/server/node-view.ts), the
 * fetch binding over a web Request (src/fetch/fetch-view.ts). The core reads nothing else, and it
 * carries no runtime's objects: the Node binding's own view type adds them (NodeRequestView).
 */
import type { RequestHead } from './sink.js';

/** A POST body read under a byte limit. */
export type BodyResult =
  | { ok: true; text: string }
  | { ok: false; reason: 'too-large' | 'invalid-utf8' | 'aborted' };

/** Headers by lower-case name, repeated ones as arrays (node:http's IncomingHttpHeaders shape). */
export interface ViewHeaders {
  readonly [name: string]: string | string[] | undefined;
  readonly authorization?: string | undefined;
  readonly cookie?: string | undefined;
  readonly host?: string | undefined;
  readonly origin?: string | undefined;
}

export interface RequestView extends RequestHead {
  /** The request method, upper case as received. */
  readonly method: string;
  /** The request target as received: path and query (e.g. '/mcp?x=1'). */
  readonly url: string;
  /** Header lookup by lower-case name; repeated headers joined with ", ". */
  header(name: string): string | undefined;
  /**
   * Every header by lower-case name (node:http's IncomingHttpHeaders shape), so code written for
   * `req.headers.authorization` keeps working; handlers see it as `extra.requestInfo.headers`.
   */
  readonly headers: ViewHeaders;
  /** Reads the body once, refusing more than `limit` bytes or invalid UTF-8. */
  readBody(limit: number): Promise<BodyResult>;
  /** The peer's address, where the runtime tells it. */
  readonly remoteAddress?: string | undefined;
  /**
   * The server is reachable only through loopback, so the Host header must name a loopback host
   * (the DNS-rebinding defence, 2025-11-25 basic/transports §"Security Warning").
   */
  readonly loopback: boolean;
}
