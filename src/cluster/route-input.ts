/**
 * What the cluster's parts share: the pipeline's routing input with the Node request and response
 * the hop relays onto, what the cluster needs from the endpoint it serves, and its counters.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TracingOptions } from '../core/observe/operations.js';
import type { Logger } from '../core/options.js';
import type { RouteInput as CoreRouteInput } from '../core/pipeline/pipeline.js';
import type { RingLimits } from '../flow/ring-buffer.js';

/** What the cluster needs from the endpoint it serves. */
export interface ClusterEndpoint {
  hasSession(id: string): boolean;
  readonly options: {
    readonly sessionIdleMs: number;
    readonly replay: RingLimits;
    readonly replayBudget: { maxTotalBytes: number };
    readonly logger: Logger | undefined;
    readonly tracing?: TracingOptions | undefined;
  };
}

/** The pipeline's routing input, with the Node request and response the hop relays onto. */
export interface RouteInput extends CoreRouteInput {
  req: IncomingMessage;
  res: ServerResponse;
}

/** Counted by the routing stage's two sides (ClusterStats reports them). */
export interface ClusterCounters {
  forwardedOut: number;
  forwardedIn: number;
  forwardFailed: number;
  forwardRefused: number;
  directoryHits: number;
  directoryMisses: number;
  directoryErrors: number;
  ownerLostResumes: number;
}

export function newCounters(): ClusterCounters {
  return {
    forwardedOut: 0,
    forwardedIn: 0,
    forwardFailed: 0,
    forwardRefused: 0,
    directoryHits: 0,
    directoryMisses: 0,
    directoryErrors: 0,
    ownerLostResumes: 0,
  };
}
