/**
 * POST: one JSON-RPC message (or, for 2025-03-26 sessions, a batch) in; 202 for notifications and
 * replies, JSON or SSE for requests (2025-11-25 basic/transports §"Sending Messages to the Server").
 * Everything is validated before anything is dispatched, so a refused body changes nothing: no
 * session is created, no handler runs, no reply reaches a waiting server request.
 */
import type { MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { initializeParamsProblem } from '../../jsonrpc/initialize-params.js';
import {
  type Classified,
  classify,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../jsonrpc/message.js';
import { type Admission, ClientLimits } from '../limits/client-limits.js';
import { isMcpRequestMethod } from '../observe/metrics.js';
import { type Refusal, Refusals, sendRefusal } from '../pipeline/refusal.js';
import { type PostInput, policyFor } from '../pipeline/route.js';
import { allowsBatch, checkVersionHeader } from '../pipeline/versions.js';
import { authInfoOf } from '../sdk/auth-info.js';
import { Exchange, type ExchangeHooks } from './exchange.js';
import { newEventTag, newSessionId } from './ids.js';
import { registerRequest } from './request-handle.js';
import { Session } from './session.js';
import type { Sessions } from './sessions.js';
import { offerLegacyTask, wantsLegacyTask } from './task-hook.js';
import { NO_WAKE, wakeRefusal } from './wake.js';

/** A batch longer than this is refused before any element is looked at. */
export const MAX_BATCH = 256;

type Item =
  | { kind: 'request'; m: JsonRpcRequest }
  | { kind: 'notification'; m: JsonRpcNotification }
  | { kind: 'reply'; m: JsonRpcResponse; id: RequestId };

export async function handleSessionPost(
  reg: Sessions,
  input: PostInput,
  parsed: unknown,
  single: Classified | undefined,
): Promise<void> {
  const { sink, headers } = input;
  const batch = single === undefined;
  const values: unknown[] = batch ? (parsed as unknown[]) : [parsed];
  if (values.length === 0) return sendRefusal(sink, Refusals.emptyBatch(), headers);
  if (values.length > MAX_BATCH) {
    return sendRefusal(sink, Refusals.invalidRequest(`a batch holds at most ${MAX_BATCH} messages`), headers);
  }
  const items: Item[] = [];
  let init: JsonRpcRequest | undefined;
  for (const v of values) {
    const c = single ?? classify(v);
    if (c.kind === 'invalid') return sendRefusal(sink, Refusals.invalidRequest(c.reason), headers);
    if (c.kind === 'request') {
      if (c.message.method === 'initialize') init = c.message;
      items.push({ kind: 'request', m: c.message });
    } else if (c.kind === 'notification') items.push({ kind: 'notification', m: c.message });
    else items.push({ kind: 'reply', m: c.message, id: c.id });
  }

  const authorize = input.auth?.authorize;
  if (authorize !== undefined) {
    for (const it of items) {
      if (it.kind !== 'request') continue;
      // A request the credential does not cover (e.g. 403 insufficient_scope for a tool).
      const denial = authorize(it.m.method, it.m.params);
      if (denial !== undefined) {
        reg.core.counters.authRefused(denial.reason);
        return sendRefusal(sink, Refusals.denied(denial), headers, batch ? null : it.m.id);
      }
    }
  }

  if (init !== undefined) {
    if (batch) return sendRefusal(sink, Refusals.initializeInBatch(), headers);
    if (!reg.core.options.stateless && input.head.header('mcp-session-id') !== undefined) {
      return sendRefusal(sink, Refusals.initializeWithSession(), headers);
    }
    // Malformed params are refused before a server is built for them (and before the client's
    // admission or a cluster entry): nothing is kept, and a flood of them costs no SDK server each.
    const problem = initializeParamsProblem(init.params);
    if (problem !== undefined)
      return sendRefusal(sink, Refusals.invalidInitialize(problem), headers, init.id);
    return initialize(reg, input, init);
  }
  if (reg.core.options.stateless) {
    // No negotiated revision to compare with, but an unsupported one is still refused (400).
    const v = input.head.header('mcp-protocol-version');
    const bad = checkVersionHeader(v, undefined);
    if (v !== undefined && bad !== undefined)
      return sendRefusal(sink, Refusals.badProtocolVersion(v, bad), headers);
    // Without a session the header is the request's revision; batches ended with 2025-03-26.
    if (batch && v !== undefined && !allowsBatch(v))
      return sendRefusal(sink, Refusals.batchNotAllowed(v, 'MCP-Protocol-Version'), headers);
    return statelessPost(reg, input, items, batch);
  }

  const first = items[0];
  if (
    !batch &&
    first?.kind === 'request' &&
    input.head.header('mcp-session-id') === undefined &&
    !isMcpRequestMethod(first.m.method)
  ) {
    // A method MCP does not define, sent without a session: most likely a newer client's first
    // probe (`server/discover` of the 2026 revision). "Method not found" with the request's own id
    // is the answer every JSON-RPC client understands (JSON-RPC 2.0 §5.1); 404 is how the 2026
    // Streamable HTTP transport carries -32601, so a dual-era client falls back to initialize.
    return sendRefusal(sink, Refusals.methodNotFound(first.m.method), headers, first.m.id);
  }
  const found = reg.lookup(input.head, input.auth);
  if (!(found instanceof Session)) return sendRefusal(sink, found, headers);
  const session = found;
  if (batch && !allowsBatch(session.version))
    return sendRefusal(sink, Refusals.batchNotAllowed(session.version), headers);

  let requests = await admitted(reg, session, input, items);
  if (requests === undefined) return;
  if (requests.size === 0) {
    // Only notifications and replies: accepted, nothing to answer (202, empty body).
    sink.respond(202, headers, '');
    for (const it of items) deliver(session, it, input);
    return;
  }
  // The 2025-11-25 experimental tasks (task-hook.ts) may take a single request.
  const tasks = reg.core.options.tasks;
  if (!batch && first?.kind === 'request' && wantsLegacyTask(tasks, session, first.m.method)) {
    if (await offerLegacyTask(tasks, reg, session, input, first.m, runExchange)) return;
    // The session may have hibernated while the hook looked (wake.ts).
    if (session.asleep) requests = await admitted(reg, session, input, items);
    if (requests === undefined) return;
  }
  runExchange(reg, session, input, items, requests, batch);
}

/**
 * The checks a session's messages must pass before any is dispatched (ids not in flight, replies
 * awaited, the per-session limits), with the server awake: a hibernated session's server is rebuilt
 * first (wake.ts), and the checks run again after the wait, since other POSTs went on meanwhile.
 * Returns the requests by id, or undefined when it answered with a refusal.
 */
async function admitted(
  reg: Sessions,
  session: Session,
  input: PostInput,
  items: Item[],
): Promise<Map<RequestId, string> | undefined> {
  // Only what the server must see wakes it (NO_WAKE: what a sleeping session takes itself).
  const needed = items.some((it) => it.kind !== 'notification' || !NO_WAKE.has(it.m.method));
  for (;;) {
    const checked = check(reg, session, items);
    if (!(checked instanceof Map)) {
      sendRefusal(input.sink, checked, input.headers);
      return undefined;
    }
    const waking = needed ? session.wake() : undefined;
    if (waking === undefined) return checked;
    const outcome = await waking;
    if (outcome !== 'woke') {
      const only = items.length === 1 && items[0]?.kind === 'request' ? items[0].m.id : null;
      sendRefusal(input.sink, wakeRefusal(outcome), input.headers, only);
      return undefined;
    }
  }
}

/** Ids not in flight, replies awaited, the per-session limits: the requests by id, or the refusal. */
function check(reg: Sessions, session: Session, items: Item[]): Map<RequestId, string> | Refusal {
  const requests = new Map<RequestId, string>();
  // The client's request ids and the ids of the server's requests it answers are two spaces (JSON-RPC
  // 2.0 §4: an id is its requestor's), so a 2025-03-26 batch may answer server request 3 and send
  // request 3 of its own. Replies get a set of their own, made only when a batch carries two.
  let replied: Set<RequestId> | RequestId | undefined;
  for (const it of items) {
    if (it.kind === 'request') {
      const id = it.m.id;
      if (session.inflight.has(id) || requests.has(id)) return Refusals.duplicateId(id);
      requests.set(id, it.m.method);
    } else if (it.kind === 'reply') {
      const id = it.id;
      const again = replied instanceof Set ? replied.has(id) : replied === id;
      if (!session.awaiting.has(id) || again) return Refusals.unexpectedReply(id);
      if (replied === undefined) replied = id;
      else if (replied instanceof Set) replied.add(id);
      else replied = new Set([replied, id]);
    }
  }
  if (requests.size === 0) return requests;
  const o = reg.core.options;
  if (session.inflight.size + requests.size > o.maxInflightPerSession)
    return Refusals.tooManyInflight(o.maxInflightPerSession);
  if (session.openStreams >= o.maxStreamsPerSession) return Refusals.tooManyStreams(o.maxStreamsPerSession);
  return requests;
}

/** Opens the exchange that answers these requests, then hands every message to the SDK. */
function runExchange(
  reg: Sessions,
  session: Session,
  input: PostInput,
  items: Item[],
  requests: Map<RequestId, string>,
  batch: boolean,
  hooks: Pick<ExchangeHooks, 'onDone' | 'asks'> = {},
): void {
  const ex = new Exchange(
    session,
    input.sink,
    requests,
    batch,
    policyFor(reg.core.options.mode, input.accept),
    input.headers,
    reg.core.options.now(),
    { guard: input.guard, onDone: hooks.onDone, asks: hooks.asks },
  );
  session.adopt(ex, requests.keys());
  ex.start();
  for (const it of items) deliver(session, it, input);
}

function deliver(session: Session, it: Item, input: PostInput): void {
  if (it.kind === 'request') {
    const id = it.m.id;
    const closeSSEStream = (): void => session.closeRequestStream(id);
    // The tool handler's way back to this request for partial output (see request-handle.ts);
    // partial output is a tool's, so other methods skip the WeakMap entry.
    if (it.m.method === 'tools/call') registerRequest(closeSSEStream, { session, id });
    const extra: MessageExtraInfo = {
      requestInfo: { headers: input.rawHeaders },
      closeSSEStream,
      closeStandaloneSSEStream: () => session.standalone.interrupt(),
    };
    if (input.auth !== undefined) extra.authInfo = authInfoOf(input.auth);
    session.dispatchRequest(it.m, extra);
  } else if (it.kind === 'notification') session.dispatchNotification(it.m);
  else session.dispatchReply(it.m, it.id);
}

async function initialize(reg: Sessions, input: PostInput, init: JsonRpcRequest): Promise<void> {
  const { sink, headers } = input;
  if (reg.core.closing) return sendRefusal(sink, Refusals.shuttingDown(1), headers);
  const stateless = reg.core.options.stateless;
  if (!stateless && !reg.slotFree) {
    reg.core.counters.add('sessionCapRefusals');
    return sendRefusal(sink, Refusals.tooManySessions(5), headers);
  }
  let admission: Admission | undefined;
  let clientKey: string | undefined;
  const limits = reg.clientLimits;
  if (limits !== undefined) {
    clientKey = ClientLimits.key(input.auth?.principal, input.remote);
    const a = limits.admit(clientKey, reg.core.options.now());
    if (!('settle' in a)) return sendRefusal(sink, a, headers);
    admission = a;
  }
  const id = stateless ? undefined : newSessionId(reg.core.options.sessionIdPrefix);
  const session = new Session(reg.deps, id, stateless ? undefined : newEventTag(), input.auth?.principal);
  const releaseSlot = reg.holdSlot();
  // A failed initialize gives its client's slot back; a registered session holds it until it ends.
  const releaseClient = (): void => admission?.settle(false);
  if (reg.core.cluster !== undefined && id !== undefined && session.tag !== undefined) {
    // The other instances must be able to route the id before any client holds it.
    try {
      await reg.core.cluster.sessionStarting({
        id,
        tag: session.tag,
        principal: input.auth?.principal,
        init: JSON.stringify(init.params ?? {}),
      });
    } catch {
      releaseSlot();
      releaseClient();
      return sendRefusal(sink, Refusals.clusterUnavailable(), headers);
    }
  }
  try {
    await session.connect(reg.serverFor(session));
  } catch (error) {
    releaseSlot();
    releaseClient();
    if (id !== undefined) reg.core.cluster?.sessionEnded(id);
    throw error;
  }
  // The answer must carry Mcp-Session-Id, which is only known to be valid once the SDK has
  // accepted the initialize request: JSON, or (for a client that refuses JSON) an SSE stream
  // opened only when the result is there.
  // The draft "Partial Tool Results" SEP's client capability (a bare ClientCapabilities field).
  session.declared(init.params);
  let registered = false;
  const ex: Exchange = new Exchange(
    session,
    sink,
    new Map([[init.id, 'initialize']]),
    false,
    input.accept.json ? 'json' : 'sse',
    { ...headers },
    reg.core.options.now(),
    {
      deferStream: true,
      beforeAnswer: (responses) => {
        // A close that began while the server was initializing: no session may start now.
        if (reg.core.closing) return Refusals.shuttingDown(1);
        const r = JSON.parse(responses[0] ?? '{}') as { result?: { protocolVersion?: unknown } };
        const v = r.result?.protocolVersion;
        if (typeof v !== 'string') return undefined;
        session.negotiated(v);
        if (id !== undefined) reg.core.cluster?.sessionVersion(id, v);
        if (id !== undefined) {
          ex.setHeader('mcp-session-id', id);
          releaseSlot();
          admission?.settle(true);
          reg.register(session, clientKey);
          registered = true;
        }
        return undefined;
      },
      // A rejected initialize (bad params, client gone before the answer) leaves nothing behind.
      onDone: () => {
        releaseSlot();
        if (!registered) {
          releaseClient();
          session.end('failed-init');
        } else {
          // Most sessions sit idle after the handshake: leave no empty request tables behind.
          session.compact();
        }
      },
    },
  );
  session.adopt(ex, [init.id]);
  ex.start();
  deliver(session, { kind: 'request', m: init }, input);
}

/** Stateless mode: a fresh server for this one request, closed when it is answered. */
async function statelessPost(reg: Sessions, input: PostInput, items: Item[], batch: boolean): Promise<void> {
  const { sink, headers } = input;
  const reply = items.find((it) => it.kind === 'reply');
  if (reply !== undefined && reply.kind === 'reply')
    return sendRefusal(sink, Refusals.unexpectedReply(reply.id), headers);
  const requests = new Map<RequestId, string>();
  for (const it of items) {
    if (it.kind !== 'request') continue;
    if (requests.has(it.m.id)) return sendRefusal(sink, Refusals.duplicateId(it.m.id), headers);
    requests.set(it.m.id, it.m.method);
  }
  if (requests.size === 0) {
    sink.respond(202, headers, '');
    return;
  }
  if (reg.core.closing) return sendRefusal(sink, Refusals.shuttingDown(1), headers);
  const session = new Session(reg.deps, undefined, undefined, input.auth?.principal);
  await session.connect(reg.core.createServer({ sessionId: undefined, principal: input.auth?.principal }));
  runExchange(reg, session, input, items, requests, batch, { onDone: reg.oneShot(session) });
}
