/**
 * The OAuth client's `fetch` on Node when the caller passed none (loaded by `http-default.ts` only on Node): one
 * `node:http`/`node:https` request per call, no pooling, no redirects, and — the reason it exists — a DNS lookup
 * whose answers pass the URL policy's address check before a connection is made. The policy refuses internal
 * address literals in a URL (url-policy.ts); a public-looking name that resolves to 169.254.169.254 or 10.0.0.1
 * is refused here, at the lookup the connection then uses, so the name cannot resolve once to a safe address for
 * a check and again to an internal one for the connection (MCP security best practices §"Server-Side Request
 * Forgery": block private ranges, and pin the resolution between check and use).
 */
import { type LookupAddress, type LookupAllOptions, type LookupOptions, lookup } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { type AddressGuardFor, AddressRefusedError, type FetchLike } from './http-client.js';

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `lookup` for `http.request` that keeps only the addresses `allowed` accepts. */
function guardedLookup(host: string, allowed: (address: string) => boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const all: LookupAllOptions = { ...options, all: true };
    lookup(hostname, all, (error, addresses) => {
      if (error !== null) {
        callback(error, []);
        return;
      }
      const kept = addresses.filter((a) => allowed(a.address));
      const first = kept[0];
      if (first === undefined) {
        const seen = addresses.map((a) => a.address).join(', ');
        callback(new AddressRefusedError(host, seen), []);
        return;
      }
      if (options.all === true) callback(null, kept);
      else callback(null, first.address, first.family);
    });
  };
}

/** Statuses whose response has no body (Fetch: "null body status"). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function toResponse(res: IncomingMessage, method: string): Response {
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // A header a WHATWG `Headers` refuses (bad name or value): left out, as undici would refuse the response.
    }
  }
  const status = res.statusCode ?? 0;
  const empty = NULL_BODY.has(status) || method === 'HEAD';
  if (empty) res.resume();
  // Response() refuses a status outside 200–599; the caller reports the thrown RangeError as a failed exchange.
  return new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
    status,
    headers,
  });
}

export function createGuardedFetch(guardFor: AddressGuardFor): FetchLike {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const guard = guardFor(url);
      const method = (init.method ?? 'GET').toUpperCase();
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => {
        headers[name] = value;
      });
      // As fetch (and the transport's Node adapter) would: some front ends refuse a request without one.
      headers['user-agent'] ??= 'node';
      const body = init.body;
      if (body !== undefined && body !== null && typeof body !== 'string') {
        reject(new TypeError('the OAuth client sends string bodies only'));
        return;
      }
      const options = {
        method,
        headers,
        agent: false as const,
        ...(init.signal !== undefined && init.signal !== null ? { signal: init.signal } : {}),
        ...(guard !== undefined ? { lookup: guardedLookup(url.hostname, guard) } : {}),
      };
      const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options);
      req.once('response', (res) => {
        try {
          resolve(toResponse(res, method));
        } catch (error) {
          res.destroy();
          reject(error);
        }
      });
      req.once('error', reject);
      req.end(body ?? undefined);
    });
}
