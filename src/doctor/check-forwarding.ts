/**
 * Whether requests are being forwarded between instances: a Sluice cluster member that receives a
 * request for a session another instance owns relays it and marks the answer `Sluice-Route:
 * forwarded`. Informational: forwarding is how a cluster behind a plain round-robin balancer works;
 * none at all behind a balancer means one instance, or sticky routing.
 */
import type { McpSession } from './session.js';
import type { Verdict } from './types.js';

export function checkForwarding(s: McpSession): Verdict {
  const { responses, forwarded } = s.routing;
  return {
    id: 'forwarding',
    status: 'ok',
    reason:
      forwarded === 0
        ? `none of ${responses} requests was forwarded between instances (one instance, or sticky routing)`
        : `${forwarded} of ${responses} requests were relayed to the session's owner by another instance (Sluice cluster, no affinity needed)`,
    details: { responses, forwarded },
  };
}
