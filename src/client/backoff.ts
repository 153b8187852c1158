/**
 * Reconnection backoff of the client's streams: how long to wait before the next attempt to resume
 * a stream whose connection was lost.
 */
import type { ResolvedClientOptions } from './resolve-options.js';

/**
 * Backoff delay for the `attempt`-th consecutive reconnection (0-based). The first is the server's
 * `retry:` exactly when it sent one (up to `maxReconnectDelayMs`) (the spec says the client MUST respect it, 2025-11-25
 * basic/transports §"Resumability and Redelivery"; a server that closes streams on purpose and asks
 * for a quick return gets it). Later ones are `min(max, initial * 2^attempt)` jittered into [d/2, d],
 * never less than the server's `retry:`: waiting longer after failed attempts is what EventSource does
 * too (HTML §9.2.3, "Optionally, wait some more ... an exponential backoff delay"), and it is what makes
 * the default attempts outlast a cluster's default 10 s owner lease: after `kill -9` of a session's
 * owner a resume is answered 503 until the lease lapses and then definitively (owner-lost), and with
 * Sluice's `retry: 1000` the five attempts are spread over at least 16 s (1 + 1 + 2 + 4 + 8), not 5 s.
 */
export function reconnectDelay(
  options: Pick<ResolvedClientOptions, 'initialReconnectDelayMs' | 'maxReconnectDelayMs' | 'random'>,
  attempt: number,
  serverRetry: number | undefined,
): number {
  // The server's `retry:` is any run of ASCII digits (WHATWG HTML §9.2.6), so it is bounded by the client's own
  // cap: a timer given more than 2^31-1 ms (or Infinity, from 309 digits on) fires at once — a reconnect storm —
  // and a value just below that parks the stream for weeks.
  const serverRetryMs =
    serverRetry === undefined ? undefined : Math.min(serverRetry, options.maxReconnectDelayMs);
  if (serverRetryMs !== undefined && attempt === 0) return serverRetryMs;
  const ceiling = Math.min(options.maxReconnectDelayMs, options.initialReconnectDelayMs * 2 ** attempt);
  const backoff = ceiling / 2 + options.random() * (ceiling / 2);
  return serverRetryMs === undefined ? backoff : Math.max(serverRetryMs, backoff);
}
