/** Refusals only a cluster member gives (the core's catalogue is in src/core/refusal.ts). */
import { type Refusal, refusal } from '../core/refusal.js';
import { JsonRpcCode } from '../jsonrpc/codes.js';

const C = JsonRpcCode;

export const ClusterRefusals = {
  /** The owner is alive (its lease holds) but cannot be reached now, or Redis cannot answer. */
  ownerUnavailable: (): Refusal =>
    refusal(
      503,
      C.ServerError,
      'owner-unavailable',
      'Service Unavailable: the session owner cannot be reached',
      {
        'retry-after': '1',
      },
    ),
  directoryUnavailable: (): Refusal =>
    refusal(
      503,
      C.ServerError,
      'cluster-unavailable',
      'Service Unavailable: the session directory cannot be reached',
      { 'retry-after': '1' },
    ),
  /** A forwarded request that reached an instance that does not own the session: never forwarded twice. */
  misdirected: (): Refusal =>
    refusal(421, C.ServerError, 'misdirected', 'Misdirected Request: this instance does not own the session'),
  /** A request claiming to be forwarded whose signature does not verify. */
  forwardForbidden: (): Refusal =>
    refusal(
      403,
      C.ServerError,
      'forward-forbidden',
      'Forbidden: not a forwarded request from a cluster member',
    ),
};
