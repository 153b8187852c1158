/**
 * The replay logs of a memory store, by session and stream number. Most sessions that keep any log
 * keep exactly one (the standalone GET stream's, from its priming event on; a JSON-answered POST
 * stores nothing), so a session's one log is held directly and a Map of its logs is made only for a
 * second stream: an idle session with a GET stream keeps no Map of its own (about 200 bytes;
 * docs/benchmarks.md, idle memory).
 */
export interface StreamKeyed {
  readonly streamId: number;
}

export class StreamTable<L extends StreamKeyed> {
  readonly #sessions = new Map<string, L | Map<number, L>>();

  /** Sessions holding at least one log (or an emptied Map, until sweepEmpty). */
  get size(): number {
    return this.#sessions.size;
  }

  get(sessionId: string, streamId: number): L | undefined {
    const e = this.#sessions.get(sessionId);
    if (e instanceof Map) return e.get(streamId);
    return e?.streamId === streamId ? e : undefined;
  }

  /** Adds `log` (none of its session and stream may be held); true when its session had none. */
  add(sessionId: string, log: L): boolean {
    const e = this.#sessions.get(sessionId);
    if (e === undefined) {
      this.#sessions.set(sessionId, log);
      return true;
    }
    if (e instanceof Map) e.set(log.streamId, log);
    else
      this.#sessions.set(
        sessionId,
        new Map([
          [e.streamId, e],
          [log.streamId, log],
        ]),
      );
    return false;
  }

  /** Forgets one log; its session goes when it held no other. */
  delete(sessionId: string, streamId: number): void {
    const e = this.#sessions.get(sessionId);
    if (e instanceof Map) {
      e.delete(streamId);
      if (e.size === 0) this.#sessions.delete(sessionId);
    } else if (e?.streamId === streamId) this.#sessions.delete(sessionId);
  }

  /** Forgets a session's logs and returns them. */
  dropSession(sessionId: string): Iterable<L> {
    const e = this.#sessions.get(sessionId);
    if (e === undefined) return [];
    this.#sessions.delete(sessionId);
    return e instanceof Map ? e.values() : [e];
  }

  /** Every log held. */
  *logs(): Generator<L> {
    for (const e of this.#sessions.values()) {
      if (e instanceof Map) yield* e.values();
      else yield e;
    }
  }

  /** Forgets the logs for which `drop` returns true (it may release them first). */
  sweep(drop: (log: L) => boolean): void {
    for (const [sessionId, e] of this.#sessions) {
      if (!(e instanceof Map)) {
        if (drop(e)) this.#sessions.delete(sessionId);
        continue;
      }
      for (const [streamId, log] of e) if (drop(log)) e.delete(streamId);
      if (e.size === 0) this.#sessions.delete(sessionId);
    }
  }

  clear(): void {
    this.#sessions.clear();
  }
}
