/**
 * The endpoint's modern-era state: requests in flight (so close() can drain and end them), listen
 * streams and their caps, the change bus, the cache of tools' `x-mcp-header` declarations, and
 * counters. Nothing here is per client: the modern era has no sessions.
 */

import { Tally } from '../../flow/tally.js';
import type { HeaderDecl } from '../../modern/param-headers.js';
import { type ChangeBus, LocalChangeBus } from '../change-bus.js';

/** What close() needs from a modern request in flight. */
export interface ModernInflight {
  /** Ends the request now: 503 if nothing was answered yet, else the stream is cut. */
  abandon(): void;
}

/** What the state keeps of a listen stream. */
export interface ListenLike {
  readonly principal: string | undefined;
  /** Server-side end: the listen result, then the end of the stream. */
  end(): void;
}

/** How long tools' header declarations are trusted without a list_changed (ms). */
export const DECL_TTL_MS = 5_000;
/** Listen streams open at once on one endpoint, and per principal. */
export const MAX_LISTEN_STREAMS = 1024;
export const MAX_LISTEN_STREAMS_PER_PRINCIPAL = 32;

export class ModernState {
  readonly #inflight = new Set<ModernInflight>();
  readonly #listens = new Set<ListenLike>();
  readonly #perPrincipal = new Map<string, number>();
  readonly bus: ChangeBus;
  /** principal ('' for none) → tool name → declarations, with the time they were read. */
  readonly #decls = new Map<string, { at: number; tools: Map<string, HeaderDecl[]> }>();
  /**
   * Requests, refusals, `cancels` (requests whose client closed the response before the answer),
   * notifications, listen streams opened and refused, and `listenCoalesced` (change notifications
   * folded into an equal pending one on a slow listen stream).
   */
  readonly counts = new Tally([
    'requests',
    'refusals',
    'cancels',
    'notifications',
    'listensOpened',
    'listenRefusals',
    'listenCoalesced',
  ] as const);

  constructor(bus: ChangeBus = new LocalChangeBus()) {
    this.bus = bus;
  }

  /** A request began; close() ends it if it is still running at the deadline. */
  callStarted(call: ModernInflight): void {
    this.#inflight.add(call);
  }
  callEnded(call: ModernInflight): void {
    this.#inflight.delete(call);
  }
  /** Requests in flight now. */
  get inflightCount(): number {
    return this.#inflight.size;
  }
  /** Listen streams open now. */
  get listenCount(): number {
    return this.#listens.size;
  }
  /** A copy of the requests in flight (close() ends each, which removes it from the set). */
  inflightNow(): ModernInflight[] {
    return [...this.#inflight];
  }
  /** A copy of the open listen streams (close() ends each, which removes it from the set). */
  listensNow(): ListenLike[] {
    return [...this.#listens];
  }

  /** Whether a new listen stream for this principal fits under the caps. */
  listenAllowed(principal: string | undefined): boolean {
    if (this.#listens.size >= MAX_LISTEN_STREAMS) return false;
    return (this.#perPrincipal.get(principal ?? '') ?? 0) < MAX_LISTEN_STREAMS_PER_PRINCIPAL;
  }

  listenOpened(l: ListenLike): void {
    this.#listens.add(l);
    this.counts.add('listensOpened');
    const k = l.principal ?? '';
    this.#perPrincipal.set(k, (this.#perPrincipal.get(k) ?? 0) + 1);
  }

  listenClosed(l: ListenLike): void {
    if (!this.#listens.delete(l)) return;
    const k = l.principal ?? '';
    const n = (this.#perPrincipal.get(k) ?? 1) - 1;
    if (n <= 0) this.#perPrincipal.delete(k);
    else this.#perPrincipal.set(k, n);
  }

  decls(principal: string | undefined, now: number): Map<string, HeaderDecl[]> | undefined {
    const e = this.#decls.get(principal ?? '');
    if (e === undefined || now - e.at > DECL_TTL_MS) return undefined;
    return e.tools;
  }

  setDecls(principal: string | undefined, now: number, tools: Map<string, HeaderDecl[]>): void {
    // Bounded: a map per principal, and at most 1024 principals remembered.
    if (this.#decls.size >= 1024) this.#decls.clear();
    this.#decls.set(principal ?? '', { at: now, tools });
  }

  /** A server said its tool list changed: re-read declarations on the next call. */
  toolsChanged(): void {
    this.#decls.clear();
  }
}
