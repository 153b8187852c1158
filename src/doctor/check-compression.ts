/**
 * Is an event stream compressed on the way, and does the compressor hold its events? Asked, as fetch
 * clients ask, with `Accept-Encoding: gzip, deflate, br` (the doctor session's default), on a `reindex`
 * call whose progress events are each about 650 bytes: past the minimum length below which a
 * compressing proxy leaves a response alone (Caddy's `encode`: 512 bytes). Caddy 2.6 compresses such a
 * stream despite `Cache-Control: no-transform` and holds its events in the compressor until the stream
 * ends, so that a server-to-client request is never delivered (docs/deploy.md "Caddy"). The buffering
 * probe's small events pass that path untouched, which is why this probe has events of its own.
 * Without a `reindex` tool, the last event-stream response seen is judged by its headers alone.
 */

import { COMPRESSION_FIX } from './fixes.js';
import { type Exchange, errorText } from './http.js';
import type { McpSession } from './session.js';
import { argumentsFor, callToEnd, type ToolInfo } from './tools.js';
import type { Verdict } from './types.js';

/** The probe's string arguments (the corpus name, echoed in every progress message). */
const PROBE_TEXT = `sluice-doctor-${'x'.repeat(600)}`;
const EVENTS = 6;
const EVERY_MS = 50;
const ASKED = 'asked with Accept-Encoding: gzip, deflate, br';

const compressedButFlowing = (ce: string): string =>
  `event stream compressed (Content-Encoding: ${ce}) despite Cache-Control: no-transform; it still arrived incrementally here, but compressors flush at their own pace — exclude text/event-stream`;

export async function checkCompression(
  s: McpSession,
  reindex: ToolInfo | undefined,
  lastSse: Exchange | undefined,
  buffering: Verdict,
  log: (l: string) => void,
): Promise<Verdict> {
  if (reindex !== undefined) {
    const args = argumentsFor(reindex, EVERY_MS, EVENTS, PROBE_TEXT);
    log(`compression: calling reindex with ${EVENTS} events of ~650 bytes, ${EVERY_MS} ms apart`);
    try {
      const { x } = await callToEnd(s, 'reindex', args, 15_000);
      if (x.status === 200 && x.isSse) return judgeHeld(x);
      log(`compression: reindex answered ${x.status} ${x.contentType}; judging headers only`);
    } catch (e) {
      log(`compression: reindex failed (${errorText(e)}); judging headers only`);
    }
  }
  return judgeHeaders(lastSse, buffering);
}

/** The large-event probe: compressed or not, and if compressed, whether the events came together. */
function judgeHeld(x: Exchange): Verdict {
  const ce = x.headers.get('content-encoding');
  const times = x.progressTimes().map(Math.round);
  const details = { contentEncoding: ce, progressAtMs: times };
  if (ce === null || ce === 'identity') {
    return {
      id: 'compression',
      status: 'ok',
      reason: `event stream not compressed, with events of ~650 bytes (${ASKED})`,
      details,
    };
  }
  const spread = (times.at(-1) ?? 0) - (times[0] ?? 0);
  // Produced (EVENTS - 1) × EVERY_MS apart in all; arriving within one spacing of each other means held.
  const held = times.length >= 2 && spread < EVERY_MS;
  return {
    id: 'compression',
    status: held ? 'fail' : 'warn',
    reason: held
      ? `event stream compressed (Content-Encoding: ${ce}) despite Cache-Control: no-transform, and its ${times.length} events, produced ${EVERY_MS} ms apart, arrived together (within ${spread} ms): a compressor on the path holds them (Caddy's encode does)`
      : compressedButFlowing(ce),
    details,
    fix: COMPRESSION_FIX,
  };
}

/** Without the probe: the headers of the last event stream, and the buffering verdict beside them. */
function judgeHeaders(x: Exchange | undefined, buffering: Verdict): Verdict {
  if (x === undefined)
    return { id: 'compression', status: 'skip', reason: 'no event-stream response to inspect' };
  const ce = x.headers.get('content-encoding');
  if (ce === null || ce === 'identity') {
    return {
      id: 'compression',
      status: 'ok',
      reason: `event stream not compressed (${ASKED})`,
      details: { contentEncoding: ce },
    };
  }
  const lumped = buffering.status === 'fail';
  return {
    id: 'compression',
    status: lumped ? 'fail' : 'warn',
    reason: lumped
      ? `event stream compressed (Content-Encoding: ${ce}) and delivered in one lump: compression on the path is a likely cause`
      : compressedButFlowing(ce),
    details: { contentEncoding: ce },
    fix: COMPRESSION_FIX,
  };
}
