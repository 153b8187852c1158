/**
 * Which redirects the transport follows, on both HTTP adapters: those that keep the method (307/308, or any for a
 * GET) and stay within the origin of the request (or only upgrade `http:` to `https:` on the same host, default
 * ports). Any other redirect answer is handed to the transport as it is, which fails the request with an
 * `HttpStatusError` saying it was not followed.
 *
 * Why not as `fetch` does: a redirect would carry every header of the request to wherever the server points, and
 * fetch drops only `Authorization` (and cookies): the `Mcp-Session-Id`, `Last-Event-ID`, a DPoP proof and the
 * caller's own headers (an API key) would reach another origin. Following a redirect is the client's choice (RFC 9110
 * §15.4); an MCP endpoint has no reason to send its client elsewhere, and the official SDK's client refuses the same
 * redirects by default (its `redirectPolicy: 'same-origin'`). A 301/302/303 would turn the POST of a message into a
 * GET, the message lost.
 */

/** Redirects followed in a row before the request fails (fetch's limit). */
export const MAX_REDIRECTS = 20;

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Whether `status` is a redirect status at all (the answer is then either followed or refused). */
export function isRedirect(status: number): boolean {
  return REDIRECT_STATUSES.has(status);
}

/** The URL to follow a redirect answer to, or undefined when the answer is to be used as it is (see above). */
export function redirectTarget(
  status: number,
  method: string,
  from: URL,
  location: string | null,
): URL | undefined {
  if (!REDIRECT_STATUSES.has(status) || location === null) return undefined;
  if (status !== 307 && status !== 308 && method !== 'GET') return undefined;
  let to: URL;
  try {
    to = new URL(location, from);
  } catch {
    return undefined;
  }
  if (to.username !== from.username || to.password !== from.password) return undefined;
  return withinOrigin(from, to) ? to : undefined;
}

/** Same scheme, host and port; or `http:` to `https:` on the same host, both on their default ports. */
function withinOrigin(from: URL, to: URL): boolean {
  if (from.protocol === to.protocol && from.host === to.host) return true;
  return (
    from.protocol === 'http:' &&
    to.protocol === 'https:' &&
    from.hostname === to.hostname &&
    from.port === '' &&
    to.port === ''
  );
}
