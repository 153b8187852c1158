/**
 * The request pipeline every binding runs. Each request passes the same layers in order, each a
 * small check that either refuses or lets it through, before any body is read or any session is
 * looked up:
 *   Host (loopback binds) → Origin → CORS preflight → authenticate → method → media types → body
 * then dispatch to the core's POST/GET/DELETE logic. A binding only builds a RequestView and a
 * ResponseSink (src/server/create-handler.ts for node:http, src/fetch/create-fetch-handler.ts for
 * web Request/Response) and calls `handle`.
 */
import { SluiceError } from '../../errors.js';
import type { ReplayResult } from '../../events/event-store.js';
import { isJsonContentType, parseAccept } from '../../http/media-type.js';
import { checkJsonShape } from '../../jsonrpc/json-shape.js';
import { corsHeaders, preflightHeaders } from '../../security/cors.js';
import { hostAllowed } from '../../security/host.js';
import { checkOrigin } from '../../security/origin.js';
import type { ClusterHooks } from '../cluster-hooks.js';
import type { Counters } from '../observe/counters.js';
import type { Operations } from '../observe/operations.js';
import { type AuthResult, isAuthDenial, type ResolvedOptions } from '../options.js';
import type { StreamGuard } from '../stream/stream-guard.js';
import { Refusals, sendRefusal } from './refusal.js';
import type { RequestView } from './request-view.js';
import { type PostInput, PostRequest } from './route.js';
import type { Headers, RequestHead, ResponseSink } from './sink.js';

/** What runs a request once it passed every check: one handler per HTTP method (the endpoint's). */
export interface MethodHandlers {
  post(input: PostInput): Promise<void>;
  get(
    head: RequestHead,
    auth: AuthResult | undefined,
    sink: ResponseSink,
    headers: Headers,
    guard: StreamGuard | undefined,
  ): Promise<void>;
  delete(head: RequestHead, auth: AuthResult | undefined, sink: ResponseSink, headers: Headers): void;
}

/** The pipeline's two entry points a binding calls. */
export interface Checks {
  /** Runs one request to its answer (or hands it to a stream that answers later). */
  handle(view: RequestView, sink: ResponseSink): Promise<void>;
  /** Logs a failure of `handle` and answers 500 if nothing was sent yet, else drops the connection. */
  fail(error: unknown, sink: ResponseSink, started: boolean): void;
}

/** What a routing stage sees: the request after authentication and (for POST) its body. */
export interface RouteInput {
  view: RequestView;
  sink: ResponseSink;
  method: string;
  sessionId: string | undefined;
  body: string;
  principal: string | undefined;
  /** CORS headers for a refusal. */
  headers: Headers;
}

/**
 * 'local': serve here. 'handled': the request was answered elsewhere (forwarded and relayed, or
 * refused), once the promise resolves.
 */
export type Router = (r: RouteInput) => 'local' | 'handled' | Promise<'local' | 'handled'>;

/** What a cluster may ask of the endpoint it serves (read only when a request or a failover comes). */
export interface EndpointView {
  /** Whether this instance holds the session. */
  hasSession(id: string): boolean;
  /** What this instance still holds of a stream, from its start (gaps allowed): a failover's rewrite. */
  frames(id: string, stream: number): ReplayResult | Promise<ReplayResult>;
}

/** Stages a binding adds to the pipeline (the Node binding's cluster; none by default). */
export interface PipelineStages {
  /** Hooks the endpoint calls about the sessions it owns, made once the options are resolved. */
  clusterHooks?: (o: ResolvedOptions, endpoint: EndpointView) => ClusterHooks | undefined;
  /** Runs after Host, Origin, authentication and the body, just before POST/GET/DELETE dispatch. */
  route?: Router;
}

export function createChecks(
  o: ResolvedOptions,
  counters: Counters,
  handlers: MethodHandlers,
  route: Router | undefined,
  ops?: Operations | undefined,
): Checks {
  const routed = async (
    view: RequestView,
    sink: ResponseSink,
    body: string,
    auth: AuthResult | undefined,
    headers: Headers,
  ): Promise<boolean> => {
    if (route === undefined) return false;
    const r = route({
      view,
      sink,
      method: view.method,
      sessionId: view.header('mcp-session-id'),
      body,
      principal: auth?.principal,
      headers,
    });
    return r !== 'local' && (r === 'handled' || (await r) === 'handled');
  };
  const methods = ['POST', ...(o.enableGetStream ? ['GET'] : []), ...(o.enableDelete ? ['DELETE'] : [])].join(
    ', ',
  );
  const challenge =
    o.resourceMetadataUrl === undefined
      ? 'Bearer'
      : `Bearer resource_metadata="${o.resourceMetadataUrl.replace(/"/g, '%22')}"`;

  async function handle(view: RequestView, sink: ResponseSink): Promise<void> {
    const host = view.header('host');
    if (!hostAllowed(host, view, o.allowedHosts)) {
      counters.refusals.add('host');
      return sendRefusal(sink, Refusals.forbiddenHost(host));
    }
    const origin = view.header('origin');
    const verdict = checkOrigin(origin, host, o.allowedOrigins);
    if (verdict === 'denied') {
      counters.refusals.add('origin');
      return sendRefusal(sink, Refusals.forbiddenOrigin(origin ?? '', host));
    }
    const headers: Headers = verdict === 'allowed' && origin !== undefined ? corsHeaders(origin) : {};
    const method = view.method;
    if (method === 'OPTIONS') {
      const requested = view.header('access-control-request-headers');
      sink.respond(
        204,
        origin === undefined ? { allow: methods } : preflightHeaders(origin, methods, requested),
        '',
      );
      return;
    }
    let auth: AuthResult | undefined;
    let guard: StreamGuard | undefined;
    const authenticate = o.authenticate;
    if (authenticate !== undefined) {
      const r = await authenticate(view);
      if (r === null || isAuthDenial(r) || typeof r?.principal !== 'string') {
        counters.authRefused(isAuthDenial(r) ? r.reason : 'unauthorized');
        return sendRefusal(
          sink,
          isAuthDenial(r) ? Refusals.denied(r) : Refusals.unauthorized(challenge),
          headers,
        );
      }
      auth = r;
      if (r.headers !== undefined) addAuthHeaders(headers, r.headers);
      const principal = r.principal;
      guard = {
        expiresAt: r.expiresAt,
        revalidateMs: revalidateEvery(o.revalidateMs, r.revalidateMs),
        revalidate: async () => {
          const again = await authenticate(view);
          // The verifier could not reach its authorization server: that says nothing about this
          // credential, so the stream stays (it still ends at `expiresAt`).
          if (isAuthDenial(again)) return again.status === 503;
          return again?.principal === principal;
        },
      };
    }
    if (method === 'POST') {
      if (!isJsonContentType(view.header('content-type')))
        return sendRefusal(sink, Refusals.unsupportedMediaType(), headers);
      const accept = parseAccept(view.header('accept'));
      if (!accept.json && !accept.sse) return sendRefusal(sink, Refusals.notAcceptablePost(), headers);
      const body = await view.readBody(o.maxBodyBytes);
      if (!body.ok) {
        if (body.reason === 'too-large')
          return sendRefusal(sink, Refusals.bodyTooLarge(o.maxBodyBytes), headers);
        if (body.reason === 'invalid-utf8')
          return sendRefusal(sink, Refusals.parseError('the body is not valid UTF-8'), headers);
        // The client went away mid-body: nobody to answer; release the exchange.
        sink.destroy();
        return;
      }
      // Before any JSON.parse (here, in a routing stage or in handlePost): parse cost is bounded too.
      const excess = checkJsonShape(body.text, o.jsonLimits);
      if (excess !== undefined)
        return sendRefusal(sink, Refusals.jsonTooComplex(excess.limit, excess.max), headers);
      // Observation scope of this POST's requests (observe/operations.ts); the context active here is
      // the binding's, where an HTTP instrumentation's server span is current.
      ops?.scope(view, sink);
      if (route !== undefined && (await routed(view, sink, body.text, auth, headers))) return;
      return handlers.post(
        new PostRequest(
          view,
          view.headers,
          body.text,
          accept,
          auth,
          sink,
          headers,
          guard,
          view.remoteAddress,
        ),
      );
    }
    if (method === 'GET' && o.enableGetStream) {
      if (!parseAccept(view.header('accept')).sse)
        return sendRefusal(sink, Refusals.notAcceptableGet(), headers);
      if (route !== undefined && (await routed(view, sink, '', auth, headers))) return;
      return handlers.get(view, auth, sink, headers, guard);
    }
    if (method === 'DELETE' && o.enableDelete) {
      if (route !== undefined && (await routed(view, sink, '', auth, headers))) return;
      return handlers.delete(view, auth, sink, headers);
    }
    return sendRefusal(sink, Refusals.methodNotAllowed(methods), headers);
  }

  // A misconfiguration (createServer returning something else, a body parser in front) fails every
  // request the same way: it goes to the logger, or to the console once when there is none, so it is
  // never silent; the 500 names the code so whoever sees it knows where to look.
  const told = new Set<string>();
  function fail(error: unknown, sink: ResponseSink, started: boolean): void {
    const message = error instanceof Error ? error.message : String(error);
    const code = error instanceof SluiceError ? error.code : undefined;
    if (o.logger !== undefined)
      o.logger.error('request.failed', { error: message, ...(code ? { code } : {}) });
    else if (code !== undefined && !told.has(code)) {
      told.add(code);
      console.error(`sluice: ${code}: ${message}`);
    }
    if (started) {
      sink.destroy();
      return;
    }
    sendRefusal(sink, Refusals.internalError(code));
  }

  return { handle, fail };
}

/** The shorter of the server's and the credential's re-check intervals; 0 (never) when neither is set. */
function revalidateEvery(server: number, credential: number | undefined): number {
  if (typeof credential !== 'number' || !(credential > 0) || !Number.isFinite(credential)) return server;
  return server > 0 ? Math.min(server, credential) : credential;
}

/**
 * Names `AuthResult.headers` may not set: the answer's framing, its CORS, and the protocol's own
 * headers, which Sluice writes itself (a credential check has no say in them).
 */
const OWN_HEADERS = new Set([
  'content-type',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
  'cache-control',
  'x-accel-buffering',
  'vary',
  'mcp-session-id',
  'mcp-protocol-version',
  'access-control-allow-origin',
  'access-control-expose-headers',
]);

/** RFC 9110 §5.1 field names and §5.5 field values (no CR, LF or NUL: no header can be smuggled in). */
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Copies the credential's headers that are well-formed and not Sluice's own; the rest are dropped. */
function addAuthHeaders(to: Headers, from: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(from)) {
    const n = name.toLowerCase();
    if (typeof value === 'string' && FIELD_NAME.test(n) && FIELD_VALUE.test(value) && !OWN_HEADERS.has(n))
      to[n] = value;
  }
}
