/**
 * RequestView over node:http's IncomingMessage, or node:http2's compatibility request for an HTTP/2
 * stream (same surface). `headers` is the message's own header object, so nothing is copied.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import type { BodyResult, RequestView } from '../core/pipeline/request-view.js';
import { BodyConsumedError } from '../errors.js';
import { isLoopbackAddress } from '../security/host.js';
import { frameworkBody } from './framework-body.js';
import { readBody } from './read-body.js';
import { targetAuthority } from './request-line.js';

/**
 * Requests whose `Expect: 100-continue` serve() left to the handler (its 'checkContinue' listener):
 * the `100 Continue` goes out only when the body is about to be read, so a request refused from its
 * header section (401, 403, 406, 413 by Content-Length, 415) gets that status instead and its
 * client uploads nothing (RFC 9110 §10.1.1). Elsewhere node:http has already sent the 100 itself.
 */
const owesContinue = new WeakSet<object>();

/** Marks a request whose `100 Continue` is the handler's to send (serve()'s 'checkContinue'). */
export function continueWhenRead(req: IncomingMessage | Http2ServerRequest): void {
  owesContinue.add(req);
}

/** The `100 Continue` a request is owed, as the body reader's `beforeRead`; undefined if none. */
function continuer(
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
): (() => void) | undefined {
  if (!owesContinue.delete(req)) return undefined;
  return () => {
    if (!res.headersSent) res.writeContinue();
  };
}

/**
 * `parsedBody`: what a framework in front already parsed (the handler's third argument, or
 * `req.body`; see framework-body.ts). A stream a body parser consumed with nothing handed over
 * fails loudly with BodyConsumedError instead of waiting forever for bytes already read.
 */
function readNodeBody(
  req: IncomingMessage,
  res: ServerResponse,
  parsedBody: unknown,
  limit: number,
): Promise<BodyResult> {
  const source = frameworkBody(req, parsedBody);
  if (source.kind === 'stream') return readBody(req, limit, continuer(req, res));
  if (source.kind === 'consumed') {
    return Promise.reject(
      new BodyConsumedError(
        'the request body was already read by a body parser (e.g. express.json()) and no parsed body was ' +
          'passed: call the handler as handler(req, res, req.body), or mount it before the body parser',
      ),
    );
  }
  if (source.kind === 'invalid-utf8') return Promise.resolve({ ok: false, reason: 'invalid-utf8' });
  if (source.bytes > limit) return Promise.resolve({ ok: false, reason: 'too-large' });
  return Promise.resolve({ ok: true, text: source.text });
}

/**
 * The Node binding's view: the runtime-neutral RequestView plus the node objects themselves
 * (node:http's, or node:http2's compatibility request and response for an HTTP/2 stream), for an
 * `authenticate` that needs more than headers and for the cluster's forwarder.
 */
export interface NodeRequestView extends RequestView {
  readonly node:
    | { readonly req: IncomingMessage; readonly res: ServerResponse }
    | { readonly req: Http2ServerRequest; readonly res: Http2ServerResponse };
}

/**
 * The node objects behind a view the Node binding built (an `authenticate` that needs more than
 * headers: `nodeObjectsOf(req)?.req` is the IncomingMessage itself); undefined for another binding's.
 */
export function nodeObjectsOf(view: RequestView): NodeRequestView['node'] | undefined {
  return (view as Partial<NodeRequestView>).node;
}

/**
 * The node objects of one request, held by a class instance, not an object literal. V8 pretenures
 * an allocation site whose objects keep surviving scavenges (allocation-site pretenuring): with SSE
 * answers, `{ req, res }` was soon allocated straight in the old generation (30,498 of 32,690 in
 * one run, read with `%InYoungGeneration`). Dead there, it kept its request and response, and all
 * they reach, alive through every scavenge until the next full collection: 4.9 KB promoted per SSE
 * echo. `new` of a class has no allocation site, so V8 never pretenures it (docs/benchmarks.md,
 * "SSE answers and V8's pretenuring").
 */
class NodeObjects<Q, S> {
  readonly req: Q;
  readonly res: S;
  constructor(req: Q, res: S) {
    this.req = req;
    this.res = res;
  }
}

/**
 * Both views are class instances, not object literals: a literal with getters (`get remoteAddress()`)
 * gets a hidden class of its own on every request, made in V8's old space, whose accessor pair
 * points at the request's young closures. A scavenge treats those old-to-young pointers as roots,
 * so every request's objects (its IncomingMessage, response, sink, parsed body) were promoted and
 * lived until the next full collection: 2.8 KB promoted per request, scavenges of 7-14 ms instead
 * of 0.2 ms, and a quarter of the CPU of a plain echo spent in GC (measured with --trace-gc on a
 * server answering only malformed bodies: 3.4 MB promoted per scavenge with the literal, none with
 * the class). A class's getters live on its prototype, one hidden class for all views.
 */
class NodeView implements NodeRequestView {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly node: NodeRequestView['node'];
  readonly #socket: Socket | null | undefined;
  /** Own functions (not prototype methods): callers may pass `view.header` around on its own. */
  readonly header: (name: string) => string | undefined;
  readonly readBody: (limit: number) => Promise<BodyResult>;

  constructor(
    node: NodeRequestView['node'],
    header: (name: string) => string | undefined,
    readBody: (limit: number) => Promise<BodyResult>,
  ) {
    const req = node.req;
    this.method = req.method ?? 'GET';
    this.url = req.url ?? '/';
    this.headers = req.headers;
    this.#socket = req.socket as Socket | null | undefined;
    this.node = node;
    this.header = header;
    this.readBody = readBody;
  }

  // Read when asked: node:http keeps an address object on the socket for its life once read,
  // and a request that needs neither (a GET stream to an allowed Host) leaves them unread.
  get remoteAddress(): string | undefined {
    return this.#socket?.remoteAddress;
  }

  get loopback(): boolean {
    return isLoopbackAddress(this.#socket?.localAddress);
  }
}

export function nodeView(req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): NodeRequestView {
  const h = req.headers;
  // RFC 9112 §3.2.2: with an absolute-form target, its authority is the request's Host.
  const authority = targetAuthority(req.url ?? '/');
  return new NodeView(
    new NodeObjects(req, res),
    (name) => {
      const v = authority !== undefined && name === 'host' ? authority : h[name];
      return Array.isArray(v) ? v.join(', ') : v;
    },
    (limit) => readNodeBody(req, res, parsedBody, limit),
  );
}

/**
 * The same over an HTTP/2 stream. HTTP/2 carries the authority in `:authority`, not Host (RFC 9113
 * §8.3.1), so `header('host')` reads that: the Host and Origin checks see the same name as on 1.1.
 */
export function h2View(req: Http2ServerRequest, res: Http2ServerResponse): NodeRequestView {
  const h = req.headers;
  return new NodeView(
    new NodeObjects(req, res),
    (name) => {
      const v = name === 'host' ? (h[':authority'] ?? h.host) : h[name];
      return Array.isArray(v) ? v.join(', ') : v;
    },
    // The compatibility request has IncomingMessage's reading surface (data/end/close, complete).
    (limit) => readBody(req as unknown as IncomingMessage, limit, continuer(req, res)),
  );
}
