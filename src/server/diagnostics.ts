/**
 * `node:diagnostics_channel` channels for session and stream lifecycle. Subscribe with
 * `diagnostics_channel.subscribe('sluice:session:start', fn)`; publishing is skipped when nobody
 * listens. Payloads are documented in docs/operations.md; session ids appear only as short hashes.
 */
import diagnostics from 'node:diagnostics_channel';
import type { Probe } from '../core/observe/probe.js';

export const CHANNELS = {
  sessionStart: 'sluice:session:start',
  sessionEnd: 'sluice:session:end',
  streamOpen: 'sluice:stream:open',
  streamClose: 'sluice:stream:close',
} as const;

export function diagnosticsProbe(): Probe {
  const start = diagnostics.channel(CHANNELS.sessionStart);
  const end = diagnostics.channel(CHANNELS.sessionEnd);
  const open = diagnostics.channel(CHANNELS.streamOpen);
  const close = diagnostics.channel(CHANNELS.streamClose);
  return {
    sessionStart: (e) => start.hasSubscribers && start.publish(e),
    sessionEnd: (e) => end.hasSubscribers && end.publish(e),
    streamOpen: (e) => open.hasSubscribers && open.publish(e),
    streamClose: (e) => close.hasSubscribers && close.publish(e),
  } as Probe;
}
