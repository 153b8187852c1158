/**
 * Finds the Sluice request behind an SDK handler's `extra`. The SDK passes the transport's
 * `closeSSEStream` callback through to `extra` unchanged (one closure per request, created in
 * post.ts), so that closure is a private, unforgeable key: nothing else needs to be trusted from
 * `extra`, and a handler served by another transport simply finds nothing (and falls back to
 * `extra.sendNotification`).
 */

import { PrivateSlot } from '../../flow/private-slot.js';
import type { RequestId } from '../../jsonrpc/message.js';
import type { Session } from './session.js';

export interface RequestHandle {
  readonly session: Session;
  readonly id: RequestId;
}

/** On the closure itself (flow/private-slot.ts says why not a WeakMap). */
const handles = new PrivateSlot<RequestHandle>('sluice.requestHandle');

export function registerRequest(key: object, handle: RequestHandle): void {
  handles.set(key, handle);
}

export function requestHandleOf(key: unknown): RequestHandle | undefined {
  return typeof key === 'function' ? handles.get(key) : undefined;
}
