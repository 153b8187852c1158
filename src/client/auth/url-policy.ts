/**
 * Which URLs the OAuth client may fetch, or send the user to. Every such URL comes from the MCP server or from an
 * authorization server it names (the challenge's `resource_metadata`, `authorization_servers`, the endpoints of the
 * authorization server metadata), so a hostile server could point the client at an internal service or at a
 * plain-text endpoint that would carry a client secret or a code in clear (MCP security best practices
 * §"Server-Side Request Forgery"; MCP basic/authorization security considerations §"Communication Security", after
 * OAuth 2.1 §1.5: every authorization server endpoint MUST be served over HTTPS).
 *
 * The rule, unless the transport's `insecureOAuthUrls` opts out:
 * - a URL on the MCP server's own origin is always allowed (the user chose that origin);
 * - otherwise it must be `https:`, or `http:` on a loopback host (development, as OAuth 2.1 §1.5 allows);
 * - and its host must not be an address literal in a loopback, private, link-local or reserved range (RFC 9728
 *   §7.7) unless the MCP server's own host is an address of the same kind: a server on 10.0.0.5 may name an
 *   authorization server on 10.0.0.6, a server on the public internet may not name 169.254.169.254.
 *
 * Address literals are classified after the WHATWG URL parser has made them canonical, so octal, hex and short
 * IPv4 forms (`http://0x7f.1/`) and IPv4-mapped IPv6 are already plain dotted quads or hex groups here. A DNS name
 * is checked by what it resolves to where that can be seen: on Node, at the lookup of the connection itself
 * (`addressGuard`, http-node-guarded.ts); `fetch` elsewhere gives no such hook, and that part belongs to the
 * deployment's egress policy (docs/authorization.md).
 */
import { AuthorizationError } from '../errors.js';

export type HostKind = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

function ipv4Kind(a: number, b: number, c: number): HostKind {
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  // RFC 6598 shared address space (carrier-grade NAT): internal to a provider's network.
  if (a === 100 && b >= 64 && b <= 127) return 'private';
  if (a === 169 && b === 254) return 'link-local';
  // 0.0.0.0/8 (this network; 0.0.0.0 reaches the local host on Linux), multicast and 240/4 (RFC 6890).
  if (a === 0 || a >= 224) return 'reserved';
  // RFC 6890 special-purpose blocks that are never a real authorization server.
  if ((a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19))) return 'reserved';
  return 'public';
}

/** The four numbers of a canonical dotted quad, or undefined. */
function dottedQuad(host: string): [number, number, number, number] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (m === null) return undefined;
  const parts = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])] as const;
  return parts.every((p) => p <= 255) ? [...parts] : undefined;
}

/** The eight 16-bit groups of a canonical (WHATWG-serialized) IPv6 literal without brackets. */
function ipv6Groups(host: string): number[] | undefined {
  const halves = host.split('::');
  if (halves.length > 2) return undefined;
  const parse = (s: string): number[] | undefined => {
    if (s === '') return [];
    const out: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-f]{1,4}$/.test(g)) return undefined;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const head = parse(halves[0] ?? '');
  const tail = halves.length === 2 ? parse(halves[1] ?? '') : [];
  if (head === undefined || tail === undefined) return undefined;
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return undefined;
  return [...head, ...new Array<number>(fill).fill(0), ...tail];
}

function ipv6Kind(groups: number[]): HostKind {
  const g = (i: number): number => groups[i] ?? 0;
  const v4 = (): HostKind => ipv4Kind(g(6) >> 8, g(6) & 0xff, g(7) >> 8);
  const zeros = (n: number): boolean => groups.slice(0, n).every((x) => x === 0);
  if (zeros(7) && g(7) === 1) return 'loopback';
  if (zeros(8)) return 'reserved';
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-translated NAT64 (64:ff9b::a.b.c.d, RFC 6052): the IPv4 address decides.
  if (zeros(5) && g(5) === 0xffff) return v4();
  if (g(0) === 0x64 && g(1) === 0xff9b && groups.slice(2, 6).every((x) => x === 0)) return v4();
  if ((g(0) & 0xfe00) === 0xfc00) return 'private';
  if ((g(0) & 0xffc0) === 0xfe80) return 'link-local';
  if ((g(0) & 0xff00) === 0xff00) return 'reserved';
  return 'public';
}

/** What kind of address an IP address (as a resolver returns it: dotted quad or IPv6 without brackets) is. */
export function addressKind(address: string): HostKind {
  return hostKind(new URL(address.includes(':') ? `http://[${address}]/` : `http://${address}/`));
}

/** What kind of address a URL's host names (a DNS name other than `localhost` counts as public). */
export function hostKind(url: URL): HostKind {
  // A trailing dot names the same host (an absolute DNS name): `localhost.` is loopback too.
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  if (host.startsWith('[') && host.endsWith(']')) {
    const groups = ipv6Groups(host.slice(1, -1));
    return groups === undefined ? 'reserved' : ipv6Kind(groups);
  }
  const quad = dottedQuad(host);
  return quad === undefined ? 'public' : ipv4Kind(quad[0], quad[1], quad[2]);
}

/** What the URL is for, in the refusal's message. */
export type OAuthUrlUse =
  | 'protected resource metadata'
  | 'authorization server metadata'
  | 'authorization server'
  | 'authorization endpoint'
  | 'token endpoint'
  | 'registration endpoint';

export class OAuthUrlPolicy {
  readonly #server: URL;
  readonly #serverKind: HostKind;
  readonly #insecure: boolean;

  constructor(serverUrl: URL, insecure: boolean) {
    this.#server = serverUrl;
    this.#serverKind = hostKind(serverUrl);
    this.#insecure = insecure;
  }

  /** The parsed URL when it may be used; AuthorizationError `url-refused` (or `discovery-failed` when unparsable). */
  check(raw: string, use: OAuthUrlUse): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch (error) {
      throw new AuthorizationError('discovery-failed', `the ${use} ${raw.slice(0, 200)} is not a URL`, error);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new AuthorizationError(
        'url-refused',
        `the ${use} ${url.href.slice(0, 200)} is not an HTTP(S) URL`,
      );
    }
    if (this.#insecure || url.origin === this.#server.origin) return url;
    const kind = hostKind(url);
    if (url.protocol === 'http:' && kind !== 'loopback') {
      throw new AuthorizationError(
        'url-refused',
        `the ${use} ${url.href.slice(0, 200)} is plain HTTP on a host that is not loopback (OAuth 2.1 §1.5 requires HTTPS); set insecureOAuthUrls to allow it`,
      );
    }
    if (!this.#kindAllowed(kind)) {
      throw new AuthorizationError(
        'url-refused',
        `the ${use} ${url.href.slice(0, 200)} names a ${kind} address, and the MCP server ${this.#server.host} is not on one; set insecureOAuthUrls to allow it`,
      );
    }
    return url;
  }

  /**
   * For a URL that passed `check`: how the addresses its name resolves to must be checked before connecting
   * (the same rule as for literals), or undefined when any will do (the policy lifted, the MCP server's own
   * origin, or a host that is already an address literal or `localhost`).
   */
  addressGuard(url: URL): ((address: string) => boolean) | undefined {
    if (this.#insecure || url.origin === this.#server.origin || hostKind(url) !== 'public') return undefined;
    if (dottedQuad(url.hostname) !== undefined || url.hostname.startsWith('[')) return undefined;
    return (address) => this.#kindAllowed(addressKind(address));
  }

  #kindAllowed(kind: HostKind): boolean {
    return kind === 'public' || (kind !== 'reserved' && kind === this.#serverKind);
  }
}
