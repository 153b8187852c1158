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

/** The lower-cased host name of a Host header (port and IPv6 brackets handled), or undefined. */
export function hostNameOf(host: string): string | undefined {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 0 ? h.slice(0, end + 1) : undefined;
  }
  const colon = h.indexOf(':');
  const name = colon >= 0 ? h.slice(0, colon) : h;
  return name.length > 0 ? name : undefined;
}

/** Whether a request may be served given its Host header and where it arrived. */
export function hostAllowed(
  host: string | undefined,
  loopback: boolean,
  allowed: readonly string[],
): boolean {
  if (!loopback) return true;
  if (host === undefined) return false;
  const name = hostNameOf(host);
  return name !== undefined && allowed.includes(name);
}
