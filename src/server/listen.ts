/**
 * The server socket behind serve(): plain HTTP/1.1 (node:http), HTTPS over HTTP/1.1 (node:https),
 * or HTTP/2 over TLS with HTTP/1.1 fallback negotiated by ALPN (node:http2 createSecureServer with
 * allowHTTP1). One listener serves all three: it receives node:http's request/response, or
 * node:http2's compatibility pair for an h2 stream.
 *
 * Why HTTP/2: a browser holds at most six HTTP/1.1 connections per origin, so a page with a GET
 * stream and a few streaming calls stalls; over h2 they are streams of one connection, each with
 * its own flow-control window (RFC 9113 §5.2), which is each SSE stream's backpressure signal.
 */
import { createServer as createHttpServer } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse, Http2Session } from 'node:http2';
import { createSecureServer } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import type { Server, Socket } from 'node:net';
import { InvalidOptionError } from '../errors.js';
import { boundedWait } from '../flow/bounded-wait.js';
import type { McpHandler } from './create-handler.js';

export interface TlsOptions {
  /** PEM private key. */
  key: string | Buffer;
  /** PEM certificate chain. */
  cert: string | Buffer;
}

export interface TransportOptions {
  tls?: TlsOptions | undefined;
  http2?: boolean | undefined;
  headersTimeout: number;
  requestTimeout: number;
  /** Idle keep-alive connections are closed after this long (serve.ts says why it is long). */
  keepAliveTimeout: number;
}

export interface TransportServer {
  server: Server;
  scheme: 'http' | 'https';
  /** Tells every HTTP/2 connection to open no new streams (GOAWAY); streams in flight go on. */
  goaway(): void;
  /**
   * Ends every connection still open. HTTP/2 sessions (already told GOAWAY) first get up to
   * `flushMs` to send what their streams hold — frames leave asynchronously, and destroying a
   * session at once would cut a stream's last bytes — then are destroyed.
   */
  closeAll(flushMs?: number): Promise<void>;
}

type Listener = (...args: Parameters<McpHandler>) => void;

export function createTransportServer(o: TransportOptions, listener: Listener): TransportServer {
  if (o.http2 === true && o.tls === undefined) {
    throw new InvalidOptionError('serve: http2 needs tls { key, cert } (browsers speak h2 only over TLS)');
  }
  if (o.tls !== undefined && (!o.tls.key || !o.tls.cert)) {
    throw new InvalidOptionError('serve: tls needs both key and cert (PEM)');
  }
  const h1 = {
    noDelay: true,
    headersTimeout: o.headersTimeout,
    requestTimeout: o.requestTimeout,
    // Node enforces both only when it sweeps connections (every 30 s by default), which would let a
    // slow-headers client hold a socket for up to 40 s; sweep at a quarter of the shorter timeout.
    connectionsCheckingInterval: Math.max(100, Math.floor(o.headersTimeout / 4)),
    keepAliveTimeout: o.keepAliveTimeout,
  };
  if (o.tls === undefined) {
    const server = createHttpServer(h1, listener);
    return {
      server,
      scheme: 'http',
      goaway: () => {},
      closeAll: async () => server.closeAllConnections(),
    };
  }
  if (o.http2 !== true) {
    const server = createHttpsServer({ ...h1, key: o.tls.key, cert: o.tls.cert }, listener);
    return {
      server,
      scheme: 'https',
      goaway: () => {},
      closeAll: async () => server.closeAllConnections(),
    };
  }
  const server = createSecureServer({ key: o.tls.key, cert: o.tls.cert, allowHTTP1: true }, (req, res) => {
    const q = req as Http2ServerRequest;
    // Only a request whose body is still to come (END_STREAM not on its HEADERS) needs a bound.
    if (q.stream !== undefined && !q.stream.endAfterHeaders)
      boundBody(q, res as Http2ServerResponse, o.requestTimeout);
    listener(q, res as Http2ServerResponse);
  });
  // createSecureServer takes no HTTP/1.1 timeout options: with allowHTTP1 it sets its own (60 s
  // headers, 300 s request) as properties, read by the connection sweep it starts on 'listening'.
  // Without this, an ALPN http/1.1 client could trickle its headers or body for five minutes.
  Object.assign(server, {
    headersTimeout: h1.headersTimeout,
    requestTimeout: h1.requestTimeout,
    connectionsCheckingInterval: h1.connectionsCheckingInterval,
    keepAliveTimeout: h1.keepAliveTimeout,
  });
  const sessions = new Set<Http2Session>();
  const sockets = new Set<Socket>();
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.on('secureConnection', (socket: Socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    server,
    scheme: 'https',
    goaway() {
      // close(): GOAWAY(NO_ERROR) naming the last stream taken, then the session ends by itself
      // once its open streams have (RFC 9113 §6.8).
      for (const s of sessions) if (!s.closed) s.close();
    },
    async closeAll(flushMs = 1_000) {
      for (const s of sessions) if (!s.closed) s.close();
      const open = [...sessions].filter((s) => !s.destroyed);
      if (open.length > 0) {
        await boundedWait(
          Promise.all(open.map((s) => new Promise((resolve) => s.once('close', resolve)))),
          flushMs,
        );
      }
      for (const s of sessions) s.destroy();
      for (const s of sockets) s.destroy();
    },
  };
}

/**
 * requestTimeoutMs for an HTTP/2 request: node:http2 has no request timeout of its own, so a stream
 * that announced a body and stalls (slow loris) would hold its buffered bytes for as long as the
 * connection lives, and one connection may open many such streams. As node:http does for HTTP/1.1,
 * an unfinished body at the deadline is answered 408 (RFC 9110 §15.5.9); the stream ends, the
 * connection and its other streams go on. The answer itself, however long, is never timed.
 * (Without END_STREAM on its HEADERS a GET is timed too, but its answer has started by then.)
 */
function boundBody(req: Http2ServerRequest, res: Http2ServerResponse, ms: number): void {
  const timer = setTimeout(() => {
    if (req.complete) return;
    if (res.headersSent) {
      // An answer under way (a GET's SSE stream whose client left its side open) is never cut; a
      // finished one whose client still holds the stream open (a refusal sent before the body was
      // read) is closed: RST_STREAM(NO_ERROR) after a complete response (RFC 9113 §8.1).
      if (res.writableEnded) res.stream.close(0 /* NO_ERROR */);
      return;
    }
    res.writeHead(408, { 'content-type': 'text/plain', 'content-length': '15' });
    // Then RST_STREAM(NO_ERROR): the client stops sending the rest (RFC 9113 §8.1), and the body
    // reader sees the stream close.
    res.end('Request Timeout', () => res.stream.close(0 /* NO_ERROR */));
  }, ms);
  const clear = (): void => clearTimeout(timer);
  req.once('end', clear);
  res.once('close', clear);
}
