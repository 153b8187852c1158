/**
 * The fixes the doctor prints, in one place so docs/deploy.md and the verdicts say the same thing.
 * Provider facts are limited to what docs/deploy.md states (and cites); anything else says to check
 * the provider's docs.
 */
import type { Fix } from './types.js';

export const BUFFERING_FIX: Fix = {
  nginx:
    "in the MCP location: `proxy_buffering off;` — or let the server's `X-Accel-Buffering: no` through (remove `proxy_ignore_headers X-Accel-Buffering`)",
  server:
    'send `X-Accel-Buffering: no` and `Cache-Control: no-cache, no-transform` on event streams (Sluice does)',
};

/** Events produced apart arrive together: something on the path holds small writes. */
export const HOLD_FIX: Fix = {
  haproxy:
    '`option http-no-delay` in `defaults` (or in both the frontend and the backend): without it HAProxy sends with MSG_MORE and the kernel holds small writes for up to 200 ms',
  server: 'write each event when it is produced, on a socket with TCP_NODELAY (Sluice does)',
};

export function idleFix(cutSeconds: number | undefined): Fix {
  const under =
    cutSeconds === undefined ? 'under the shortest idle timeout on the path' : `well under ${cutSeconds} s`;
  return {
    nginx:
      '`proxy_read_timeout 3600s; proxy_send_timeout 3600s;` in the MCP location (the default 60s cuts quiet streams)',
    haproxy: '`timeout server` and `timeout client` above the server keepalive (both cut a quiet stream)',
    alb: 'the idle timeout defaults to 60 s: keep the server keepalive under it, or raise the load balancer attribute `idle_timeout.timeout_seconds`',
    cloudflare:
      "idle streams are cut after ~100–125 s: keep the server keepalive under it (check your plan's docs for `proxy_read_timeout`)",
    server: `send an SSE comment keepalive ${under} (Sluice: \`keepaliveMs\`, default 15000; \`sluice serve --keepalive-ms\`)`,
  };
}

export const COMPRESSION_FIX: Fix = {
  nginx: '`gzip off;` in the MCP location, or leave text/event-stream out of `gzip_types`',
  haproxy: 'leave text/event-stream out of `compression type`',
  caddy:
    'keep `encode` off the MCP path (`@compressible not path /mcp /mcp/*` and `encode @compressible gzip zstd`): Caddy 2.6 compresses event streams despite no-transform and holds their events',
  cloudflare:
    "text/event-stream is not in Cloudflare's default compressed types; if a Compression Rule adds it, remove it",
  server:
    'do not compress event streams (no compression middleware on the MCP route); keep `Cache-Control: no-transform`',
};

export const NOT_FOUND_FIX: Fix = {
  server:
    'answer 404 to a request whose Mcp-Session-Id is unknown or expired: clients start a new session only on 404 (2025-11-25 basic/transports, session management)',
};

export const METHOD_FIX: Fix = {
  nginx:
    '`proxy_pass` forwards every method; check for `limit_except` or a `location` that does not cover the MCP path',
  server: 'answer 405 Method Not Allowed (with `Allow`) to methods the endpoint does not support',
};
