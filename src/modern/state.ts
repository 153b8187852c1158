/**
 * The endpoint's modern-era state: requests in flight (so close() can drain and end them), the
 * cache of tools' `x-mcp-header` declarations, and counters. Nothing here is per client: the
 * modern era has no sessions.
 */
import type { HeaderDecl } from './param-headers.js';

/** What close() needs from a modern request in flight. */
export interface ModernInflight {
  /** Ends the request now: 503 if nothing was answered yet, else the stream is cut. */
  abandon(): void;
}

/** How long tools' header declarations are trusted without a list_changed (ms). */
export const DECL_TTL_MS = 5_000;

export class ModernState {
  readonly inflight = new Set<ModernInflight>();
  /** principal ('' for none) → tool name → declarations, with the time they were read. */
  readonly #decls = new Map<string, { at: number; tools: Map<string, HeaderDecl[]> }>();
  requests = 0;
  refusals = 0;
  /** Requests whose client closed the response before the answer (cancellation). */
  cancels = 0;
  notifications = 0;

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
