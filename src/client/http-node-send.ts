/**
 * One request of the Node adapter: redirects followed as `redirect.ts` allows (the method kept, within the origin
 * unless the policy is `'follow'`, at most 20), and a request that met a stale keep-alive socket sent again.
 */
import {
  type Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type RequestOptions,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import {
  type CancelSignal,
  type HttpMethod,
  type HttpResponse,
  MAX_STALE_RESENDS,
  STALE_CODES,
  StaleConnectionError,
} from './http-client.js';
import { NodeResponse, rawHeader } from './http-node-response.js';
import type { SilenceWatch, Watched } from './http-node-silence.js';
import { headersAcross, isRedirect, MAX_REDIRECTS, type RedirectPolicy, redirectTarget } from './redirect.js';

/** Where requests to one URL go; derived once per URL, not per request. */
export interface Target {
  readonly href: string;
  readonly https: boolean;
  readonly hostname: string;
  readonly port: string;
  /** The `Host` header: host, and port unless it is the scheme's default (`URL.host`). */
  readonly host: string;
  readonly path: string;
  readonly origin: string;
}

/** What `send` needs from its client: targets, agents, and the silence watch for the response head. */
export interface Context extends SilenceWatch {
  target(url: URL): Target | undefined;
  agent(target: Target): HttpAgent;
  /** The transport's `redirectPolicy` (redirect.ts). */
  readonly redirects: RedirectPolicy;
}

function abortError(): Error {
  const error = new Error('This operation was aborted');
  error.name = 'AbortError';
  return error;
}

export function send(
  context: Context,
  method: HttpMethod,
  url: URL,
  headers: Record<string, string>,
  body: string | undefined,
  signal: CancelSignal,
  resendable: boolean,
  redirects: number,
  resets = 0,
): Promise<HttpResponse> {
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError());
      return;
    }
    const target = context.target(url);
    if (target === undefined) {
      reject(new TypeError(`unsupported URL scheme ${url.protocol}`));
      return;
    }
    // A flat [name, value, …] list goes straight to the header serializer (still validated), skipping one
    // setHeader() and its bookkeeping per field; `Host` is then ours to add.
    const outgoing: string[] = ['host', target.host];
    for (const name in headers) outgoing.push(name, headers[name] as string);
    // The body goes as bytes: with a string body node:http writes the header block in the same chunk and encoding
    // (UTF-8), so a header value's character above 0x7F (one byte each, as fetch sends a ByteString) reached the
    // server as two bytes on a POST and as one on a GET.
    const payload = body === undefined ? undefined : Buffer.from(body, 'utf8');
    if (payload !== undefined) outgoing.push('content-length', String(payload.length));
    const options: RequestOptions & { servername?: string } = {
      method,
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      headers: outgoing as unknown as OutgoingHttpHeaders,
      agent: context.agent(target),
    };
    // Plain HTTP has no SNI; an empty servername spares the agent deriving one from the Host header.
    if (!target.https) options.servername = '';
    const req = (target.https ? httpsRequest : httpRequest)(options);
    let response: NodeResponse | undefined;
    const head: Watched = {
      at: Date.now(),
      expire: (error) => {
        if (response === undefined) req.destroy(error);
      },
    };
    context.watch(head);
    let listening = true;
    const detach = (): void => {
      if (!listening) return;
      listening = false;
      signal.offAbort(onAbort);
    };
    function onAbort(): void {
      const reason = abortError();
      detach();
      context.unwatch(head);
      if (response !== undefined) response.abort(reason);
      else req.destroy(reason);
      reject(reason);
    }
    signal.onAbort(onAbort);
    req.on('error', (error: NodeJS.ErrnoException) => {
      // After the response head, socket errors surface on the response (see NodeResponse); this rejection is
      // then a no-op.
      if (response !== undefined) return;
      detach();
      context.unwatch(head);
      if (req.reusedSocket && !signal.aborted && STALE_CODES.has(error.code ?? '')) {
        if (resendable || !written) {
          // A pooled keep-alive socket the server had already closed (idle timeout, restart), and a request that
          // is safe to repeat or was never written: sent again on another connection, as browsers do.
          if (resets < MAX_STALE_RESENDS) {
            resolve(send(context, method, url, headers, body, signal, resendable, redirects, resets + 1));
            return;
          }
        } else {
          reject(new StaleConnectionError(error));
          return;
        }
      }
      reject(error);
    });
    req.on('response', (res: IncomingMessage) => {
      context.unwatch(head);
      const status = res.statusCode ?? 0;
      const next = isRedirect(status)
        ? redirectTarget(status, method, url, rawHeader(res.rawHeaders, 'location'), context.redirects)
        : undefined;
      if (next !== undefined) {
        detach();
        res.resume();
        if (redirects >= MAX_REDIRECTS) {
          reject(new TypeError('redirect count exceeded'));
          return;
        }
        // The method kept (redirect.ts): the request goes again as it is, without its credentials when it
        // leaves the origin (only under `redirectPolicy: 'follow'`).
        const nextHeaders = headersAcross(url, next, headers);
        resolve(send(context, method, next, nextHeaders, body, signal, resendable, redirects + 1));
        return;
      }
      response = new NodeResponse(res, status, detach);
      resolve(response);
    });
    let written = false;
    const write = (): void => {
      if (req.destroyed) return;
      written = true;
      if (payload === undefined) req.end();
      else req.end(payload);
    };
    if (resendable) {
      write();
    } else {
      // A request that must not be repeated goes out on a reused socket only after the event loop has polled
      // the sockets once (two check phases apart): a close the server already sent (idle timeout) is read
      // first, and the request, never written, then goes on a fresh connection (RFC 9112 §9.3.1: a request
      // known not to have been applied may be retried).
      req.once('socket', () => {
        if (req.reusedSocket) setImmediate(() => setImmediate(write));
        else write();
      });
    }
  });
}
