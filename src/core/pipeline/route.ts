/**
 * What a POST carries once the pipeline's checks passed, and the choice of era: the body is parsed
 * once, classified once, and handed to the session era (revisions up to 2025-11-25) or to the
 * 2026-07-28 era (MCP 2026-07-28 basic/versioning §"Backward Compatibility": a request carrying the
 * per-request `_meta` version is served statelessly; everything else keeps the session machinery).
 * Also the one answer policy both eras derive from the configured mode and the client's Accept.
 */
import type { Acceptance } from '../../http/media-type.js';
import { type Classified, classify } from '../../jsonrpc/message.js';
import { classifyEra, type EraVerdict } from '../../modern/classify.js';
import { scopeFor } from '../observe/request-scope.js';
import type { AuthResult, ResponseMode } from '../options.js';
import type { StreamGuard } from '../stream/stream-guard.js';
import { Refusals, sendRefusal } from './refusal.js';
import type { Headers, RequestHead, ResponseSink } from './sink.js';

/** How a request is answered: JSON, SSE, or JSON upgraded to SSE by the first related message. */
export type Policy = ResponseMode;

export interface PostInput {
  head: RequestHead;
  /** Raw request headers, passed to handlers as `extra.requestInfo.headers`. */
  rawHeaders: Record<string, string | string[] | undefined>;
  body: string;
  accept: Acceptance;
  auth: AuthResult | undefined;
  sink: ResponseSink;
  /** Headers for every answer (CORS). */
  headers: Headers;
  /** Bounds SSE answers by the caller's credential. */
  guard?: StreamGuard | undefined;
  /** The peer's address, for the per-client limits when there is no principal. */
  remote?: string | undefined;
}

/**
 * The PostInput the pipeline makes for each POST. A class, not an object literal: V8 pretenures an
 * allocation site whose objects keep surviving scavenges, and under 2026-07-28 load (a server per
 * request) the pipeline's `{ head, sink, … }` was allocated straight in the old generation, where,
 * dead, it kept its view and sink (the request, the response and all they reach) alive through
 * every scavenge until a full collection. `new` of a class has no allocation site
 * (docs/benchmarks.md, "SSE answers and V8's pretenuring").
 */
export class PostRequest implements PostInput {
  readonly head: RequestHead;
  readonly rawHeaders: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly accept: Acceptance;
  readonly auth: AuthResult | undefined;
  readonly sink: ResponseSink;
  readonly headers: Headers;
  readonly guard: StreamGuard | undefined;
  readonly remote: string | undefined;

  constructor(
    head: RequestHead,
    rawHeaders: Record<string, string | string[] | undefined>,
    body: string,
    accept: Acceptance,
    auth: AuthResult | undefined,
    sink: ResponseSink,
    headers: Headers,
    guard: StreamGuard | undefined,
    remote: string | undefined,
  ) {
    this.head = head;
    this.rawHeaders = rawHeaders;
    this.body = body;
    this.accept = accept;
    this.auth = auth;
    this.sink = sink;
    this.headers = headers;
    this.guard = guard;
    this.remote = remote;
  }
}

/** The configured mode, narrowed by what the client's Accept admits. */
export function policyFor(mode: ResponseMode, accept: Acceptance): Policy {
  if (!accept.sse) return 'json';
  if (!accept.json) return 'sse';
  return mode;
}

/** The two eras' POST handlers, as the endpoint wires them. */
export interface EraHandlers {
  /** Sessions: the parsed body, and its classification when it is a single message (not a batch). */
  session(input: PostInput, parsed: unknown, single: Classified | undefined): Promise<void>;
  modern(input: PostInput, verdict: Exclude<EraVerdict, { era: 'legacy' }>): Promise<void>;
}

export async function routePost(input: PostInput, eras: EraHandlers): Promise<void> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(input.body);
  } catch (e) {
    return sendRefusal(
      input.sink,
      Refusals.parseError(e instanceof Error ? e.message : 'invalid JSON'),
      input.headers,
    );
  }
  // Era routing, before any session logic.
  const single = Array.isArray(parsed) ? undefined : classify(parsed);
  // A shared server sees a 2026-07-28 request under a wire id: its span names the client's id.
  if (single?.kind === 'request') scopeFor(input.rawHeaders)?.single(single.message);
  const head = input.head;
  const era = classifyEra(parsed, head.header('mcp-protocol-version'), single, head.header('mcp-session-id'));
  if (era.era === 'legacy') return eras.session(input, parsed, single);
  return eras.modern(input, era);
}
