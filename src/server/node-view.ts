/**
 * RequestView over node:http's IncomingMessage, or node:http2's compatibility request for an HTTP/2
 * stream (same surface). `headers` is the message's own header object, so nothing is copied.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { RequestView } from '../core/request-view.js';
import { isLoopbackAddress } from '../security/host.js';
import { readBody } from './read-body.js';

export function nodeView(req: IncomingMessage, res: ServerResponse): RequestView {
  const h = req.headers;
  const socket = req.socket;
  return {
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    headers: h,
    header(name: string): string | undefined {
      const v = h[name];
      return Array.isArray(v) ? v.join(', ') : v;
    },
    readBody: (limit) => readBody(req, limit),
    remoteAddress: socket?.remoteAddress,
    loopback: isLoopbackAddress(socket?.localAddress),
    node: { req, res },
  };
}

/**
 * The same over an HTTP/2 stream. HTTP/2 carries the authority in `:authority`, not Host (RFC 9113
 * §8.3.1), so `header('host')` reads that: the Host and Origin checks see the same name as on 1.1.
 */
export function h2View(req: Http2ServerRequest, res: Http2ServerResponse): RequestView {
  const h = req.headers;
  const socket = req.socket;
  return {
    method: req.method,
    url: req.url,
    headers: h,
    header(name: string): string | undefined {
      const v = name === 'host' ? (h[':authority'] ?? h.host) : h[name];
      return Array.isArray(v) ? v.join(', ') : v;
    },
    // The compatibility request has IncomingMessage's reading surface (data/end/close, complete).
    readBody: (limit) => readBody(req as unknown as IncomingMessage, limit),
    remoteAddress: socket?.remoteAddress,
    loopback: isLoopbackAddress(socket?.localAddress),
    node: { req, res },
  };
}
