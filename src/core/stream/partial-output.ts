/**
 * What a stream does for partial output beyond writing it: the record of one delta it hands the
 * replay store (which may merge consecutive deltas into one run, events/partial-run.ts), and the
 * hold of a producer whose consumer is away.
 */
import type { EventStore } from '../../events/event-store.js';
import type { StoredDelta } from '../../events/partial-run.js';
import { Gate } from '../../flow/gate.js';
import type { PartialFrame } from '../../flow/partial-frame.js';
import type { Pacer } from './pacer.js';

/** Replay buffer fill at which a producer whose consumer is away is held instead of paced. */
const HOLD_AT_FILL = 0.9;

/** The delta a frame carries, as the store keeps it (its id set: the stream has event ids). */
export function storedDelta(p: PartialFrame, id: string): StoredDelta {
  return { template: p.template, owner: p.owner, index: p.first, escaped: p.escaped, id };
}

/**
 * The wait of a producer of partial output whose consumer is away: paced, and once the stream's
 * replay buffer is nearly full, held until a connection attaches (or the stream ends, or
 * `orphanTimeoutMs`, when the request is cancelled anyway), so what it produces never evicts what
 * the client still has to resume: a resume is never declined for a producer that waits.
 */
export class AwayHold {
  readonly #pacer: Pacer;
  readonly #maxMs: number;
  /** Made the first time the buffer is nearly full. */
  #gate: Gate | undefined;

  constructor(pacer: Pacer, maxMs: number) {
    this.#pacer = pacer;
    this.#maxMs = maxMs;
  }

  /** The producer's wait while nobody reads stream `streamId` of `sessionKey`. */
  wait(store: EventStore | undefined, sessionKey: string, streamId: number): Promise<void> | undefined {
    if (store?.fill === undefined || store.fill(sessionKey, streamId) < HOLD_AT_FILL)
      return this.#pacer.wait();
    this.#gate ??= new Gate(this.#maxMs);
    return this.#gate.wait();
  }

  /** A connection attached or the stream ended: every held producer goes on. */
  release(): void {
    this.#gate?.open();
  }
}
