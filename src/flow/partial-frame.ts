/**
 * One queued text frame of partial output that later deltas of the same request may merge into
 * while the socket is blocked (see flow/outbound-queue.ts). It keeps the escaped text and the newest
 * event id, and renders the SSE frame only when the socket takes it.
 *
 * Replay correctness: every delta is also stored on its own, with its own id, in the replay store.
 * A merged frame carries the newest id of the deltas it holds, and merging only ever extends the
 * queue's tail, so every id a client can have seen is preceded on the wire by exactly the text of
 * the ids below it: a resume from any delivered id replays exactly the text that followed.
 */

import type { PartialTemplate } from '../jsonrpc/partial.js';
import { encodeJsonFrame } from '../sse/encode.js';

export class PartialFrame {
  readonly template: PartialTemplate;
  /** Which request's deltas this frame holds (merging never crosses requests). */
  readonly owner: object;
  readonly first: number;
  #n: number;
  #escaped: string;
  #id: string | undefined;

  constructor(
    template: PartialTemplate,
    owner: object,
    id: string | undefined,
    first: number,
    n: number,
    escaped: string,
  ) {
    this.template = template;
    this.owner = owner;
    this.#id = id;
    this.first = first;
    this.#n = n;
    this.#escaped = escaped;
  }

  /** How many deltas this frame holds. */
  get n(): number {
    return this.#n;
  }
  /** Their text, JSON-escaped, in order. */
  get escaped(): string {
    return this.#escaped;
  }
  /** The newest delta's event id (undefined until the event log numbers it, or without ids). */
  get id(): string | undefined {
    return this.#id;
  }

  /** The event log numbered this delta (its own id; merging later carries the newest id). */
  numbered(id: string): void {
    this.#id = id;
  }

  /** Bytes this frame adds to a queue (string length; the frame's fixed parts are small). */
  get bytes(): number {
    return this.#escaped.length + 160;
  }

  /** Whether `next` directly continues this frame (same request, next delta). */
  continues(next: PartialFrame): boolean {
    return next.owner === this.owner && next.first === this.first + this.#n;
  }

  /** Takes `next`'s text and id. */
  absorb(next: PartialFrame): void {
    this.#escaped += next.escaped;
    this.#n += next.n;
    this.#id = next.id;
  }

  render(): string {
    return encodeJsonFrame(this.#id, this.template.text(this.first, this.#n, this.#escaped));
  }
}
