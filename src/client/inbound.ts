/**
 * Incoming messages: each one settles the pending request it answers (the wire id of a re-sent request is mapped
 * back to the id the Client knows), then goes to the Client, straight into its `Protocol` when fast dispatch is
 * on. Failing a request delivers a JSON-RPC error response the same way.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { classify, type MessageKind } from '../jsonrpc/message.js';
import type { TransportContext } from './context.js';
import { MalformedMessageError, type SluiceClientError, TRANSPORT_FAILURE_JSONRPC_CODE } from './errors.js';
import type { ResponseStream } from './response-stream.js';
import { defaultResultType } from './result-type.js';
import type { RequestId, WireMessage } from './wire.js';

/**
 * Routes one incoming message: settles the pending request of a response, then dispatches.
 */
export function receiveMessage(t: TransportContext, message: WireMessage, from?: ResponseStream): void {
  const c = classify(message);
  const kind = c.kind;
  if (kind === 'invalid') {
    t.reportError(
      new MalformedMessageError(
        `not a JSON-RPC message (${c.reason}): ${JSON.stringify(message).slice(0, 200)}`,
      ),
    );
    return;
  }
  if (kind === 'response') {
    let id = message.id as RequestId;
    if (t.aliases.size > 0) {
      const original = t.aliases.get(id);
      if (original !== undefined) {
        t.aliases.delete(id);
        message.id = original;
        id = original;
      }
    }
    const entry = t.pending.get(id);
    if (entry === undefined) {
      // Every request the Client awaits is pending here (a resumed one too), so this response settles
      // nothing: a second one for the same request, one for a request already failed or cancelled, or
      // one for an id never sent. Passed on, it would reach the Client as a second answer to settle;
      // it is reported instead, once, and dropped (JSON-RPC 2.0 §5: one response per request).
      t.reportError(
        new MalformedMessageError(
          `a response for no pending request (id ${JSON.stringify(id)}): a duplicate, or for a request already settled or never sent`,
        ),
      );
      return;
    }
    t.pending.delete(id);
    entry.trace?.answered(message);
    // Learn the tools' `x-mcp-header` declarations for later modern `tools/call`s (modern.ts).
    if (entry.message.method === 'tools/list' && message.result !== undefined) {
      t.paramHeaders.learn(message.result);
    }
    if (entry.modern !== undefined) defaultResultType(message.result);
    const stream = entry.stream;
    if (stream !== undefined) t.runner.settled(stream, id, from);
  }
  dispatch(t, message, kind);
}

function dispatch(t: TransportContext, message: WireMessage, kind: MessageKind): void {
  if (kind === 'response') {
    // The SDK Protocol runs notification handlers one microtask later (`Promise.resolve().then(handler)`) but
    // settles responses synchronously, and deletes the request's progress handler when it does. Several
    // events parsed from one chunk are dispatched in one synchronous run, so a response must wait behind the
    // notifications dispatched before it, or the last progress update would be dropped as "unknown token".
    queueMicrotask(() => deliver(t, message, kind));
    return;
  }
  deliver(t, message, kind);
}

function deliver(t: TransportContext, message: WireMessage, kind: MessageKind): void {
  const fast = t.fast;
  if (fast !== undefined && fast.target.transport === t.owner) {
    if (kind === 'notification') fast.notification(message);
    else if (kind === 'response') fast.response(message);
    else fast.request(message, undefined);
    return;
  }
  t.deliverToClient(message as JSONRPCMessage);
}

/**
 * Fails a pending request: the Client's promise rejects through a JSON-RPC error response, and the typed
 * error goes to `onerror`.
 */
export function failRequest(t: TransportContext, id: RequestId, error: SluiceClientError): void {
  const entry = t.pending.get(id);
  if (entry === undefined) return;
  t.pending.delete(id);
  entry.trace?.failed(error.code, error.message);
  t.reportError(error);
  dispatch(
    t,
    {
      jsonrpc: '2.0',
      id,
      error: {
        code: TRANSPORT_FAILURE_JSONRPC_CODE,
        message: error.message,
        data: { sluiceCode: error.code },
      },
    },
    'response',
  );
}
