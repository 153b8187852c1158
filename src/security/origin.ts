/**
 * Origin validation on every request (2025-11-25 basic/transports: "Servers MUST validate the Origin
 * header on all incoming connections"; "If the Origin header is present and invalid, servers MUST
 * respond with HTTP 403"). Absent Origin is allowed: non-browser clients send none, and a browser
 * always sends one on the cross-origin requests this defends against. Checked independently of
 * Host: the official conformance suite only tests both spoofed at once, so it cannot notice a
 * server that checks only one.
 */

import { hostNameOf } from './host.js';

export type OriginVerdict = 'absent' | 'allowed' | 'denied';

/**
 * With an allowlist, the origin must be in it exactly. Without one, only same-origin requests
 * pass: the Origin's host:port must equal the Host header (which, on loopback binds, is itself
 * limited to loopback names — so the default allowlist is the loopback origins on the serving port).
 */
export function checkOrigin(
  origin: string | undefined,
  host: string | undefined,
  allowlist: ReadonlySet<string> | undefined,
): OriginVerdict {
  if (origin === undefined) return 'absent';
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return 'denied';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'denied';
  if (allowlist !== undefined) return allowlist.has(url.origin) ? 'allowed' : 'denied';
  // A Host that is not a plain host[:port] has no same-origin reading (see host.ts).
  if (host === undefined || hostNameOf(host) === undefined) return 'denied';
  let self: URL;
  try {
    self = new URL(`${url.protocol}//${host}`);
  } catch {
    return 'denied';
  }
  return self.host === url.host ? 'allowed' : 'denied';
}
