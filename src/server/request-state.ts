/**
 * An integrity-protected MRTR `requestState` (MCP 2026-07-28 basic/patterns/mrtr §"Security": the
 * state comes back from the client, so the server must detect tampering). A server-side helper,
 * apart from the MRTR plumbing in src/modern, which needs no crypto.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface RequestStateCodec {
  /** Signs a JSON value into an opaque string for `requestState`. */
  seal(value: unknown): string;
  /** The value a sealed string carries, or undefined if it was altered, expired or is not one. */
  open(token: string | undefined): unknown;
}

/**
 * HMAC-SHA256 sealed `requestState`: `base64url(JSON {v, exp}).base64url(mac)`. Every instance
 * behind a load balancer must share the secret. Not encrypted: do not put secrets in the state.
 */
export function createRequestStateCodec(options: {
  secret: string | Buffer;
  ttlMs?: number;
  now?: () => number;
}): RequestStateCodec {
  const secret = options.secret;
  if (secret.length < 16) throw new RangeError('requestState secret must be at least 16 bytes');
  const ttl = options.ttlMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  const mac = (body: string): Buffer => createHmac('sha256', secret).update(body).digest();
  return {
    seal(value) {
      const body = Buffer.from(JSON.stringify({ v: value, exp: now() + ttl })).toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    open(token) {
      if (typeof token !== 'string' || token.length > 64 * 1024) return undefined;
      const dot = token.indexOf('.');
      if (dot < 0) return undefined;
      const body = token.slice(0, dot);
      const given = Buffer.from(token.slice(dot + 1), 'base64url');
      const want = mac(body);
      if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
      try {
        const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
          v?: unknown;
          exp?: unknown;
        };
        if (typeof parsed.exp !== 'number' || parsed.exp < now()) return undefined;
        return parsed.v;
      } catch {
        return undefined;
      }
    },
  };
}
