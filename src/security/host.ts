import { memoByHeader } from '../http/header-memo.js';

/**
 * DNS-rebinding defence for loopback binds (2025-11-25 basic/transports §"Security Warning"):
 * a page on evil.example can make its name resolve to 127.0.0.1, but the browser still sends
 * `Host: evil.example`. So on a loopback socket only loopback host names are served.
 */

/** True when the address the request arrived on is loopback (the server is local-only). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/**
 * The lower-cased host name of a Host header, or undefined when the header is not a plain
 * `host[:port]` (RFC 9110 §7.2: uri-host [ ":" port ]). Anything else — userinfo, paths, spaces —
 * is refused rather than guessed at, so this check and the Origin check read the same name.
 */
export const hostNameOf: (host: string) => string | undefined = memoByHeader((host: string) => {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9._~-]+)(?::(\d{1,5}))?$/.exec(host.trim().toLowerCase());
  if (m === null) return undefined;
  if (m[2] !== undefined && Number(m[2]) > 65_535) return undefined;
  return m[1];
});

/**
 * Whether a request may be served given its Host header and where it arrived (`arrived`: the
 * request view). Where it arrived is read only when the Host does not name an allowed host (the
 * answer is the same either way), so a request to an allowed name leaves the socket's local
 * address unread (node:http keeps an object for it for the connection's life once read).
 */
export function hostAllowed(
  host: string | undefined,
  arrived: { readonly loopback: boolean },
  allowed: readonly string[],
): boolean {
  if (host !== undefined) {
    const name = hostNameOf(host);
    if (name !== undefined && allowed.includes(name)) return true;
  }
  return !arrived.loopback;
}
