/**
 * Which stream copies this instance wrote to Redis (replica.ts) and what each holds by its own count:
 * for a session's end (its copies deleted), the budget over everything this instance keeps (the
 * oldest finished copies freed first), the sweep of copies that expired by themselves, and the
 * copies written again after a failover (each one named here is written again from the owner's own
 * buffer).
 *
 * A stream is entered when its first write is sent, not when Redis acknowledges it: a write that
 * failed while Redis failed over is one a failover must write again.
 */
import { BoundedMap } from '../flow/bounded-map.js';

export interface CopyEntry {
  readonly sid: string;
  readonly stream: number;
  /** Bytes the copy holds, as the last write's reply counted them (frame bytes, the bounds' unit). */
  readonly bytes: number;
  /** When the copy expires on its own (a finished stream's grace), 0 while the stream goes on. */
  readonly expiresAt: number;
  /** The ids of the requests the stream answers (JSON array), '' when not told. */
  readonly reqs: string;
}

interface Tracked {
  bytes: number;
  expiresAt: number;
  reqs: string;
}

export class ReplicaLedger {
  readonly #streams = new Map<string, Map<number, Tracked>>();
  /**
   * Finished streams in the order they finished. Not a Set read from its front, which walks every
   * deleted slot V8 has not compacted (flow/bounded-map.ts).
   */
  readonly #finished = new BoundedMap<string, true>(Number.POSITIVE_INFINITY);
  #bytes = 0;

  /** Bytes held over all copies, by the last replies. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The stream has a copy (or a write on its way). */
  enter(sid: string, stream: number): void {
    this.#tracked(sid, stream);
  }

  /** The requests the stream answers, as the copy records them. */
  describe(sid: string, stream: number, reqs: string): void {
    this.#tracked(sid, stream).reqs = reqs;
  }

  /** The stream ended: its copy expires by itself at `expiresAt`. */
  finish(sid: string, stream: number, expiresAt: number): void {
    this.#tracked(sid, stream).expiresAt = expiresAt;
    this.#finished.set(`${sid}\0${stream}`, true);
  }

  /** A write's reply: the copy now holds `bytes` (unless its session was dropped meanwhile). */
  held(sid: string, stream: number, bytes: number): void {
    const t = this.#streams.get(sid)?.get(stream);
    if (t === undefined) return;
    this.#bytes += bytes - t.bytes;
    t.bytes = bytes;
  }

  /** Forgets the session's copies; returns the streams it had (their keys are the caller's to delete). */
  dropSession(sid: string): number[] {
    const streams = this.#streams.get(sid);
    if (streams === undefined) return [];
    this.#streams.delete(sid);
    for (const [n, t] of streams) {
      this.#bytes -= t.bytes;
      this.#finished.delete(`${sid}\0${n}`);
    }
    return [...streams.keys()];
  }

  /** Forgets finished copies that expired by now (Redis dropped them by their TTL). */
  sweep(now: number): void {
    for (const key of this.#finished.keys()) {
      const [sid, n] = splitKey(key);
      const t = this.#streams.get(sid)?.get(n);
      if (t === undefined || t.expiresAt > now) continue;
      this.#forget(sid, n, t);
    }
  }

  /**
   * Forgets the oldest finished copy, for the budget; returns it (its keys are the caller's to
   * delete), or undefined when no finished copy is left.
   */
  freeOldest(): { sid: string; stream: number } | undefined {
    for (let key = this.#finished.oldestKey(); key !== undefined; key = this.#finished.oldestKey()) {
      const [sid, n] = splitKey(key);
      const t = this.#streams.get(sid)?.get(n);
      if (t === undefined) {
        this.#finished.delete(key);
        continue;
      }
      this.#forget(sid, n, t);
      return { sid, stream: n };
    }
    return undefined;
  }

  /** The copies kept now, by name (a snapshot: the caller may write while it walks it). */
  names(): { sid: string; stream: number }[] {
    const out: { sid: string; stream: number }[] = [];
    for (const [sid, streams] of this.#streams)
      for (const stream of streams.keys()) out.push({ sid, stream });
    return out;
  }

  /** A copy as it stands now; undefined once forgotten (its session dropped, expired, freed). */
  current(sid: string, stream: number): CopyEntry | undefined {
    const t = this.#streams.get(sid)?.get(stream);
    return t === undefined
      ? undefined
      : { sid, stream, bytes: t.bytes, expiresAt: t.expiresAt, reqs: t.reqs };
  }

  #tracked(sid: string, stream: number): Tracked {
    let streams = this.#streams.get(sid);
    if (streams === undefined) {
      streams = new Map();
      this.#streams.set(sid, streams);
    }
    let t = streams.get(stream);
    if (t === undefined) {
      t = { bytes: 0, expiresAt: 0, reqs: '' };
      streams.set(stream, t);
    }
    return t;
  }

  #forget(sid: string, n: number, t: Tracked): void {
    this.#bytes -= t.bytes;
    this.#finished.delete(`${sid}\0${n}`);
    const streams = this.#streams.get(sid);
    streams?.delete(n);
    if (streams?.size === 0) this.#streams.delete(sid);
  }
}

function splitKey(key: string): [string, number] {
  const i = key.lastIndexOf('\0');
  return [key.slice(0, i), Number(key.slice(i + 1))];
}
