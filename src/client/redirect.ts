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
 * GET, the message lost. A caller whose server moved to another origin opts in with `redirectPolicy: 'follow'`.
 */

/** Redirects followed in a row before the request fails (fetch's limit). */
export const MAX_REDIRECTS = 20;

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Whether `status` is a redirect status at all (the answer is then either followed or refused). */
export function isRedirect(status: number): boolean {
  return REDIRECT_STATUSES.has(status);
}

/**
 * Which redirects of the transport's own requests are followed (the `redirectPolicy` option):
 * - `'same-origin'` (the default): as above.
 * - `'follow'`: also those to another origin, for a server that moved. Still only those that keep the method (a
 *   301/302/303 of a POST would drop the message) and never from `https:` to `http:` (the session id and the
 *   caller's headers would cross the network in clear). Crossing origins drops the credentials (`Authorization`,
 *   `DPoP`, `Cookie`, `Proxy-Authorization`: {@link CREDENTIAL_HEADERS}), as fetch does; the session id, the
 *   protocol version, `Last-Event-ID` and the caller's own `headers` go along, which is what opting in accepts.
 */
export type RedirectPolicy = 'same-origin' | 'follow';

export const REDIRECT_POLICIES: readonly RedirectPolicy[] = ['same-origin', 'follow'];

/** Headers a redirect to another origin does not carry (the Fetch standard's "CORS non-wildcard request-header
 * names" plus DPoP, whose proof names the original URL and is useless, or worse, elsewhere). */
export const CREDENTIAL_HEADERS: readonly string[] = [
  'authorization',
  'dpop',
  'cookie',
  'proxy-authorization',
];

/** The URL to follow a redirect answer to, or undefined when the answer is to be used as it is (see above). */
export function redirectTarget(
  status: number,
  method: string,
  from: URL,
  location: string | null,
  policy: RedirectPolicy = 'same-origin',
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
  if (withinOrigin(from, to)) return to;
  if (policy !== 'follow') return undefined;
  if (to.protocol !== 'http:' && to.protocol !== 'https:') return undefined;
  return from.protocol === 'https:' && to.protocol === 'http:' ? undefined : to;
}

/**
 * The headers to send to `to` after a redirect from `from`: the same object within the origin, else a copy without
 * {@link CREDENTIAL_HEADERS} (names are lower-case, as the adapters hold them).
 */
export function headersAcross(from: URL, to: URL, headers: Record<string, string>): Record<string, string> {
  if (withinOrigin(from, to)) return headers;
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADERS.includes(name)) kept[name] = value;
  }
  return kept;
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
