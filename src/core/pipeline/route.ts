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
import { scopeFor } from '../observe/operations.js';
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
  const era = classifyEra(parsed, input.head.header('mcp-protocol-version'), single);
  if (era.era !== 'legacy') return eras.modern(input, era);
  return eras.session(input, parsed, single);
}
