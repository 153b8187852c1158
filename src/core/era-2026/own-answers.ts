/**
 * The answers Sluice gives itself in a 2026-07-28 call, instead of passing the request on: a
 * server/discover result built from the served server's initialize result, a subscriptions/listen
 * stream handed to a `ListenStream`, and the check of a tools/call's `Mcp-Param-*` headers against
 * the tool's `x-mcp-header` declarations (MCP 2026-07-28 server/discover, subscriptions/listen,
 * basic/transports/streamable-http). Each reaches the served server only through the call's
 * internal asks (introspect.ts); the call (call.ts) owns the answer and the cleanup.
 */
import { JsonRpcCode } from '../../jsonrpc/codes.js';
import { errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../jsonrpc/message.js';
import { checkParamHeaders, type HeaderDecl } from '../../modern/param-headers.js';
import { type ModernRefusal, ModernRefusals } from '../../modern/refusal.js';
import type { ModernMeta } from '../../modern/validate.js';
import type { PostInput } from '../pipeline/route.js';
import type { ModernEra } from './era.js';
import { type Ask, describeParams, discoverResult, type ServerInfo, toolHeaderDecls } from './introspect.js';
import { honouredFilter, ListenStream, parseFilter } from './listen.js';

/** What an own answer needs of its call (call.ts builds it only for these three methods). */
export interface OwnAnswerHost {
  readonly era: ModernEra;
  readonly input: PostInput;
  readonly req: JsonRpcRequest;
  readonly meta: ModernMeta;
  /** The call is over (answered, refused or cancelled). */
  done(): boolean;
  /** A request of Sluice's own to the served server (never seen by the client). */
  readonly ask: Ask;
  respond(message: JsonRpcResponse): Promise<void> | undefined;
  refuse(r: ModernRefusal): void;
  /** The served server described itself: its serverInfo stamps the answer. */
  described(info: ServerInfo): void;
  /** The call's answer is over without a body of its own (a listen stream takes the response). */
  handOver(): void;
}

/** The served server's initialize result (capabilities, serverInfo, instructions), asked internally. */
async function describe(h: OwnAnswerHost): Promise<Record<string, unknown> | undefined> {
  const r = await h.ask('initialize', describeParams(h.meta));
  return r !== undefined && 'result' in r ? r.result : undefined;
}

/** server/discover (MCP 2026-07-28 server/discover), answered from the served server's initialize result. */
export async function answerDiscover(h: OwnAnswerHost): Promise<void> {
  const described = await describe(h);
  if (h.done()) return;
  if (described === undefined) {
    await h.respond(
      errorResponse(h.req.id, JsonRpcCode.InternalError, 'the server could not describe itself'),
    );
    return;
  }
  const { result, info } = discoverResult(described);
  if (info !== undefined) h.described(info);
  await h.respond({ jsonrpc: '2.0', id: h.req.id, result });
}

/**
 * subscriptions/listen: the filter is checked, narrowed to the server's capabilities, and the
 * stream handed to a ListenStream; the call's per-request server is not needed after that.
 */
export async function answerListen(h: OwnAnswerHost): Promise<void> {
  const era = h.era;
  const filter = parseFilter(h.req.params);
  if (typeof filter === 'string') return h.refuse(ModernRefusals.invalidMeta(h.req.id, filter));
  if (!era.state.listenAllowed(h.input.auth?.principal)) {
    era.state.counts.add('listenRefusals');
    return h.refuse(ModernRefusals.tooManyListenStreams(h.req.id));
  }
  const init = await describe(h);
  if (h.done()) return;
  const caps = (init?.['capabilities'] ?? {}) as Record<string, unknown>;
  const stream = new ListenStream(era, h.input, h.req.id, honouredFilter(filter, caps));
  h.handOver();
  if (h.input.sink.closed || era.core.closing) return;
  stream.open();
}

/**
 * A tools/call's `Mcp-Param-*` headers against the tool's declarations: the refusal, if any, or
 * `answered` when the declarations could not be read and the call was answered with an error.
 */
export async function paramHeaderRefusal(h: OwnAnswerHost): Promise<ModernRefusal | 'answered' | undefined> {
  const era = h.era;
  const tools = await toolHeaderDecls(
    h.ask,
    era.state,
    h.input.auth?.principal,
    era.core.options.now,
    h.done,
  );
  if (tools === 'unanswered') {
    // Fail closed: without the declarations the headers an intermediary may have routed or
    // authorized on cannot be held against the body (2026-07-28 transports, Mcp-Param headers).
    await h.respond(
      errorResponse(
        h.req.id,
        JsonRpcCode.InternalError,
        'the server did not list its tools in time, so the Mcp-Param headers could not be checked',
      ),
    );
    return 'answered';
  }
  return tools === undefined ? undefined : refusalFor(tools, h.req, h.input);
}

/**
 * The same check while the principal's declarations are cached (every call but one per
 * DECL_TTL_MS or tool list change): answered at once, with no host object and no await on the
 * per-call path; `uncached` when paramHeaderRefusal must read them first.
 */
export function cachedParamHeaderRefusal(
  era: ModernEra,
  input: PostInput,
  req: JsonRpcRequest,
): ModernRefusal | 'uncached' | undefined {
  const tools = era.state.decls(input.auth?.principal, era.core.options.now());
  return tools === undefined ? 'uncached' : refusalFor(tools, req, input);
}

function refusalFor(
  tools: ReadonlyMap<string, HeaderDecl[]>,
  req: JsonRpcRequest,
  input: PostInput,
): ModernRefusal | undefined {
  const name = req.params?.['name'];
  const decls = typeof name === 'string' ? tools.get(name) : undefined;
  if (decls === undefined) return undefined;
  return checkParamHeaders(req.id, decls, req.params?.['arguments'], (n) => input.head.header(n));
}
