/**
 * Lifecycle events for observers (OpenTelemetry, custom logs). The core calls a Probe; the node
 * binding implements it with `node:diagnostics_channel` (see src/server/diagnostics.ts), so the
 * core itself stays free of node:* imports. Session ids in these events are short hashes only.
 */
export interface SessionEvent {
  session: string;
  principal: string | undefined;
  protocolVersion: string;
}
export interface StreamEvent {
  session: string;
  stream: number;
  kind: 'post' | 'get';
  /** On a resume: the Last-Event-ID sequence it resumed after, and how many events it replayed. */
  cursor?: number | undefined;
  replayed?: number | undefined;
}

/** Where a resumed connection started (answer/connection.ts keeps it; its stream reads it). */
export interface ResumePoint {
  /** The `Last-Event-ID` position it resumed after; undefined when it asked for the stream afresh. */
  readonly cursor: number | undefined;
  /** Events the replay carried before the stream went live. */
  readonly replayed: number;
}

/** A stream event; `resumed` says where a resumed connection started. */
export function streamEvent(
  session: string,
  stream: number,
  kind: 'post' | 'get',
  resumed: ResumePoint | undefined,
): StreamEvent {
  return { session, stream, kind, cursor: resumed?.cursor, replayed: resumed?.replayed };
}

/** Why a stream's connection closed (Probe.streamClose). */
export type StreamCloseReason = 'finished' | 'client' | 'overflow' | 'server';

/**
 * A stream's close event, written as one literal with the same keys in the same order as
 * `{ ...streamEvent(…), reason }`: on Node 20's V8 a spread with a key added after it takes a slow
 * path of about 2 µs, paid by every SSE answer's close (docs/benchmarks.md, "A slot in a private
 * field").
 */
export function streamCloseEvent(
  session: string,
  stream: number,
  kind: 'post' | 'get',
  resumed: ResumePoint | undefined,
  reason: StreamCloseReason,
): StreamEvent & { reason: StreamCloseReason } {
  return { session, stream, kind, cursor: resumed?.cursor, replayed: resumed?.replayed, reason };
}

export interface Probe {
  sessionStart(e: SessionEvent): void;
  sessionEnd(e: SessionEvent & { reason: string }): void;
  streamOpen(e: StreamEvent): void;
  streamClose(e: StreamEvent & { reason: StreamCloseReason }): void;
}

/** FNV-1a, 32 bits, hex: enough to correlate log lines, useless for recovering a session id. */
export function shortHash(id: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}
