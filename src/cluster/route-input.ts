/**
 * What the cluster's parts share: the pipeline's routing input with the Node request and response
 * the hop relays onto, what the cluster needs from the endpoint it serves, and its counters.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TracingOptions } from '../core/observe/operations.js';
import type { Logger } from '../core/options.js';
import type { RouteInput as CoreRouteInput, EndpointView } from '../core/pipeline/pipeline.js';
import type { RingLimits } from '../flow/ring-buffer.js';
import { Tally } from '../flow/tally.js';

/** What the cluster needs from the endpoint it serves: the pipeline's view of it, and its options. */
export interface ClusterEndpoint extends EndpointView {
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
const CLUSTER_COUNTS = [
  'forwardedOut',
  'forwardedIn',
  'forwardFailed',
  'forwardRefused',
  'directoryHits',
  'directoryMisses',
  'directoryErrors',
  'ownerLostResumes',
] as const;
export type ClusterCounters = Tally<(typeof CLUSTER_COUNTS)[number]>;

export function newCounters(): ClusterCounters {
  return new Tally(CLUSTER_COUNTS);
}
