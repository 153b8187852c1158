/**
 * RequestView over node:http's IncomingMessage (also node:http2's compatibility request, which has
 * the same surface). `headers` is the message's own header object, so nothing is copied.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
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
