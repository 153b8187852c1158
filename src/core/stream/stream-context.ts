/**
 * What a stream is given: the headers of every SSE answer, what all streams of an endpoint share,
 * and what a stream needs of its session (StreamContext: the session's own state plus the shared
 * part, so the session forwards nothing).
 */
import type { EventStore } from '../../events/event-store.js';
import type { Counters } from '../observe/counters.js';
import type { Probe } from '../observe/probe.js';
import type { Headers } from '../pipeline/sink.js';
import type { WriterSet } from './live.js';
import type { Pacer } from './pacer.js';
import type { WriterLimits } from './sse-writer.js';

export const SSE_HEADERS: Headers = {
  'content-type': 'text/event-stream',
  // no-transform stops compressing proxies; X-Accel-Buffering: no stops nginx buffering this response.
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/**
 * What every stream of an endpoint shares: one object per endpoint, so neither a stream nor its
 * session holds a copy of (or a forwarding getter for) any of it.
 */
export interface StreamShared {
  readonly counters: Counters;
  readonly limits: WriterLimits;
  readonly now: () => number;
  /** Every attached writer, for the shared keepalive timer. */
  readonly live: WriterSet;
  readonly retryMs: number;
  readonly probe: Probe | undefined;
  readonly pacer: Pacer;
  /** An undecided answer becomes a stream after this long (answer/answer.ts). */
  readonly streamAfterMs: number;
  /** A finished stream stays resumable from the store this long. */
  readonly streamGraceMs: number;
  /** A request whose stream nobody resumes is cancelled after this long. */
  readonly orphanTimeoutMs: number;
}

/** What a stream needs from its session: the session's own state, and the endpoint's shared part. */
export interface StreamContext {
  readonly shared: StreamShared;
  readonly sessionKey: string;
  /** Per-session id tag; undefined when events carry no ids (stateless mode). */
  readonly tag: string | undefined;
  readonly store: EventStore | undefined;
  /** Whether this session gets priming events (negotiated >= 2025-11-25). */
  readonly priming: boolean;
  /** The session has ended: nothing may attach any more. */
  readonly ended: boolean;
  /** The session id as a short hash, for probes and logs. */
  readonly sessionHash: string;
}

export type StreamKind = 'post' | 'get';

/** Told when a stream's connection goes away before the stream is done, and when one attaches. */
export interface StreamWatcher {
  streamDetached(): void;
  streamAttached(): void;
}
