/**
 * What node:http leaves to the server about an HTTP/1.1 request line and its Host field.
 *
 * - RFC 9112 §3.2: a request with more than one Host field line MUST be answered 400. node:http keeps
 *   the first and drops the rest, so the Host check (DNS rebinding) and a proxy in front that reads the
 *   last one could each see a different name.
 * - RFC 9112 §3.2.2: a server MUST accept the absolute-form of the request target
 *   (`POST http://host:port/mcp HTTP/1.1`), and then the authority in the target replaces Host.
 */

/** How many Host field lines `rawHeaders` (node's name/value list) carries. */
export function hostLines(rawHeaders: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name !== undefined && name.length === 4 && name.toLowerCase() === 'host') n++;
  }
  return n;
}

const ABSOLUTE = /^https?:\/\/([^/?#]*)([^#]*)/i;

/** The path and query of a request target, in origin-form whatever form it came in. */
export function targetPath(url: string): string {
  if (url.charCodeAt(0) === 47 /* '/' */) return url;
  const m = ABSOLUTE.exec(url);
  if (m === null) return url;
  const rest = m[2] ?? '';
  return rest.length === 0 || rest.charCodeAt(0) === 63 /* '?' */ ? `/${rest}` : rest;
}

/** The path alone (no query) of a request target. */
export function targetPathname(url: string): string {
  const p = targetPath(url);
  const q = p.indexOf('?');
  return q < 0 ? p : p.slice(0, q);
}

/** The authority of an absolute-form target (it stands for Host); undefined for origin-form. */
export function targetAuthority(url: string): string | undefined {
  if (url.charCodeAt(0) === 47 /* '/' */) return undefined;
  return ABSOLUTE.exec(url)?.[1];
}
