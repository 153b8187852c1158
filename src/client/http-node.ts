/**
 * The Node adapter: `node:http` / `node:https` with a keep-alive agent per transport. The default on Node
 * (loaded by `http-default.ts` only when running on Node, so no `node:*` import reaches a browser).
 *
 * Why: Node 20's global `fetch` (undici's WHATWG layer: Request/Response/Headers objects, web streams,
 * `makeTransferable`, AbortSignal plumbing) costs several hundred µs of CPU per call and most of the GC; this
 * path reads the response head from `rawHeaders` and the body as Buffers from 'data' events.
 *
 * It keeps the observable behaviour of `fetch` that the transport relies on, except that redirects are followed only
 * when they keep the method, and within the origin unless the policy says `'follow'` (redirect.ts, as the fetch
 * adapter does too), `accept-encoding: gzip,
 * deflate` is sent unless set and gzip/deflate/br bodies are decoded, `user-agent: node` is sent unless set,
 * header lookups join repeated fields like `Headers.get`, 204/205/304 have a null body, and a body that ends
 * before it is complete is an error, not an EOF.
 *
 * Files: this one (the client: agents, targets, the silence watch), `http-node-send.ts` (one request, its
 * redirects and stale-socket retries), `http-node-response.ts` (the response and its body),
 * `http-node-decoders.ts` (gzip/deflate/br), `http-node-silence.ts` (the 300 s silence timeout).
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { TransportClosedError } from './errors.js';
import type { HttpClient } from './http-client.js';
import { type Context, send, type Target } from './http-node-send.js';
import { silenceWatch } from './http-node-silence.js';
import type { RedirectPolicy } from './redirect.js';

/** @internal exported for the unit tests */
export { nodeResponse } from './http-node-response.js';

/**
 * Keep-alive sockets idle for {@link IDLE_SOCKET_MS}, or for the server's `Keep-Alive: timeout=N` hint minus
 * one second when that is shorter, are closed (the agent applies the hint only when `timeout` is set). Like
 * undici's `keepAliveTimeout` (4 s by default, hint minus 1 s), so a request rarely meets a socket the server
 * is closing. The timeout only destroys *free* sockets; one serving an SSE stream is left alone.
 */
const IDLE_SOCKET_MS = 4_000;
const AGENT_OPTIONS = { keepAlive: true, timeout: IDLE_SOCKET_MS };

/** One keep-alive HTTP client (its own agents, destroyed by `close()`). */
export function createNodeHttp(redirects: RedirectPolicy = 'same-origin'): HttpClient {
  let http: HttpAgent | undefined;
  let https: HttpsAgent | undefined;
  let closed = false;
  let last: Target | undefined;
  const silence = silenceWatch();
  const context: Context = {
    target(url) {
      const href = url.href;
      if (last !== undefined && last.href === href) return last;
      const isHttps = url.protocol === 'https:';
      if (!isHttps && url.protocol !== 'http:') return undefined;
      const hostname = url.hostname;
      last = {
        href,
        https: isHttps,
        // `URL.hostname` keeps the brackets of an IPv6 literal; the socket layer wants the bare address.
        hostname: hostname.charCodeAt(0) === 91 ? hostname.slice(1, -1) : hostname,
        port: url.port,
        host: url.host,
        path: url.pathname + url.search,
        origin: url.origin,
      };
      return last;
    },
    agent(target) {
      if (target.https) {
        https ??= new HttpsAgent(AGENT_OPTIONS);
        return https;
      }
      http ??= new HttpAgent(AGENT_OPTIONS);
      return http;
    },
    watch: silence.watch,
    unwatch: silence.unwatch,
    redirects,
  };
  return {
    request(method, url, headers, body, signal, resendable) {
      if (closed) return Promise.reject(new TransportClosedError());
      if (headers['accept-encoding'] === undefined) headers['accept-encoding'] = 'gzip, deflate';
      if (headers['user-agent'] === undefined) headers['user-agent'] = 'node';
      return send(context, method, url, headers, body, signal, resendable, 0);
    },
    close() {
      closed = true;
      silence.close();
      http?.destroy();
      https?.destroy();
    },
  };
}
