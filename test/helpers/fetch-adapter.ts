/**
 * Serves a fetch handler ((Request) => Promise<Response>) on node:http, the way a fetch runtime
 * would: the request body is a web stream, the response body is read by pull and written to the
 * socket only as fast as the socket drains (so the handler sees the socket's backpressure), and a
 * client that goes away aborts request.signal and cancels the response body. Used to run the
 * server integration suites against the fetch binding under Node (SLUICE_TEST_BINDING=fetch).
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { FetchHandler } from '../../src/fetch/index.js';

export function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const init: RequestInit & { duplex?: 'half' } = { method, headers, signal };
  if (hasBody) {
    init.body = Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>;
    init.duplex = 'half';
  }
  // The URL's authority is not the Host header (which may be hostile and is checked by the
  // pipeline from the headers): a fixed loopback base keeps new URL() from throwing on it.
  return new Request(new URL(req.url ?? '/', 'http://127.0.0.1'), init);
}

export async function pipeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  const body = response.body;
  if (body === null) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = body.getReader();
  res.once('close', () => {
    reader.cancel().catch(() => {});
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) {
      await Promise.race([once(res, 'drain'), once(res, 'close')]);
      if (res.destroyed) return;
    }
  }
  res.end();
}

export function fetchListener(handler: FetchHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const ac = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    let request: Request;
    try {
      request = toRequest(req, ac.signal);
    } catch {
      res.writeHead(400).end();
      return;
    }
    handler(request, { remoteAddress: req.socket.remoteAddress })
      .then((response) => pipeResponse(response, res))
      .catch(() => res.destroy());
  };
}

/** A node:http server on 127.0.0.1:0 whose every request goes to `handler`. */
export async function listenFetch(handler: FetchHandler): Promise<{ server: Server; port: number }> {
  const server = createServer({ noDelay: true }, fetchListener(handler));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}
