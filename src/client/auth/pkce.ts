/**
 * PKCE (RFC 7636) with S256, and the random values of a flow, on Web Crypto: `globalThis.crypto` exists on Node
 * 20+, in browsers and in edge runtimes, so nothing here imports `node:*`.
 */

/** Base64url without padding (RFC 4648 §5), as PKCE and `state` use it. */
export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** `bytes` random bytes, base64url: 32 bytes give the 43-character verifier RFC 7636 §4.1 recommends. */
export function randomToken(bytes = 32): string {
  const buffer = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(buffer);
  return base64url(buffer);
}

/** The S256 challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))) (RFC 7636 §4.2). */
export async function s256(verifier: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}
