/** The refusals a cluster member gives; each is an entry of the core's catalogue (src/core/refusal.ts). */
import { type Refusal, Refusals } from '../core/pipeline/refusal.js';

export const ClusterRefusals: Record<
  'ownerUnavailable' | 'directoryUnavailable' | 'misdirected' | 'forwardForbidden',
  () => Refusal
> = {
  ownerUnavailable: Refusals.ownerUnavailable,
  directoryUnavailable: Refusals.clusterUnavailable,
  misdirected: Refusals.misdirected,
  forwardForbidden: Refusals.forwardForbidden,
};
