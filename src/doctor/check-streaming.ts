/**
 * Does a streamed answer reach the client as it is produced, or in one lump at the end (a buffering
 * proxy), or in clumps (a proxy holding small writes a while: HAProxy without `option
 * http-no-delay`)? Using, in order of preference: the server's `reindex` tool (progress every 50 ms
 * for 2 s),
 * its `sleep` tool (3 s of silence: a server that streams sends at least its priming event or
 * headers-and-comment early), or the standalone GET stream (its first bytes should arrive at once).
 * The same event-stream response then tells whether Cache-Control: no-transform survived the path;
 * whether something compresses event streams is asked with larger events (check-compression.ts).
 */

import { checkCompression } from './check-compression.js';
import { BUFFERING_FIX, HOLD_FIX } from './fixes.js';
import { type Exchange, errorText } from './http.js';
import type { McpSession } from './session.js';
import { longestStall, readAfterStall, StallWatch, type StallWindow, stalledWithin } from './stall-watch.js';
import { argumentsFor, callToEnd, type ToolInfo } from './tools.js';
import type { Status, Verdict } from './types.js';

export interface StreamingResult {
  buffering: Verdict;
  headers: Verdict;
  compression: Verdict;
}

/** What one probe concluded; `undefined` verdict means inconclusive (try the next probe). */
export interface Probe {
  label: string;
  x?: Exchange;
  verdict?: Verdict;
  note: string;
  /** The verdict came from how the events spread out in time (judgePacing), not from their order. */
  paced?: true;
}

const ms = (n: number | undefined): string => (n === undefined ? '?' : `${Math.round(n)} ms`);

/** The `reindex` probe's spacing: events are produced at least this far apart (sequential waits). */
const PROGRESS_EVERY_MS = 50;
/** An event arriving this soon after the one before was held on the way at least the difference. */
const CLUMP_GAP_MS = 15;
/**
 * A silence this much longer than the spacing is a buffer, not a held write: HAProxy's held writes
 * leave after 200 ms at most (the kernel's limit for MSG_MORE), nginx's buffers when they fill.
 */
const BURST_GAP_MS = 500;

/**
 * How the progress events of a stream spread out on arrival: how many came within CLUMP_GAP_MS of
 * the one before (though the tool produced them farther apart), and the longest gap. Not counted
 * against the path: events read together during or right after one of the doctor's own stalls
 * (`stalls`, stall-watch.ts), and the part of a silence the doctor spent stalled; `ownStallMs` says
 * how long the longest stall was.
 */
export function clumpsOf(
  times: readonly number[],
  stalls: readonly StallWindow[] = [],
): { events: number; clumped: number; longestGapMs: number; ownStallMs: number } {
  let clumped = 0;
  let longest = 0;
  for (let i = 1; i < times.length; i++) {
    const before = times[i - 1] ?? 0;
    const at = times[i] ?? 0;
    const gap = at - before;
    if (gap < CLUMP_GAP_MS && !readAfterStall(at, stalls)) clumped++;
    longest = Math.max(longest, gap - stalledWithin(before, at, stalls));
  }
  return {
    events: times.length,
    clumped,
    longestGapMs: Math.round(longest),
    ownStallMs: Math.round(longestStall(stalls)),
  };
}

/** A probe that reached a buffering verdict; anything short of 'ok' carries `fix` (the buffering fix). */
function judged(
  label: string,
  x: Exchange | undefined,
  status: Status,
  reason: string,
  details?: Record<string, unknown>,
  fix = BUFFERING_FIX,
): Probe {
  const verdict: Verdict = { id: 'buffering', status, reason };
  if (details !== undefined) verdict.details = details;
  if (status !== 'ok') verdict.fix = fix;
  return x === undefined ? { label, note: '', verdict } : { label, x, note: '', verdict };
}

/**
 * For a tool whose progress events leave the server `spacedMs` apart at least (it waits between them):
 * a failure when they came in bursts with long silences, a warning when they came in clumps, else
 * undefined. A quarter of the events joined to the one before is held, not a moment's jitter.
 */
function judgePacing(
  label: string,
  x: Exchange,
  spacedMs: number,
  c: ReturnType<typeof clumpsOf>,
  all: Record<string, unknown>,
): Probe | undefined {
  if (c.events < 8 || c.clumped * 4 <= c.events) return undefined;
  // Silences far longer than the spacing: a buffer released as it fills (nginx's proxy buffers).
  if (c.longestGapMs > BURST_GAP_MS) {
    return pacedProbe(
      judged(
        label,
        x,
        'fail',
        `${label}: events produced ${spacedMs} ms apart arrived in bursts (${c.clumped} of ${c.events} together, silences up to ${c.longestGapMs} ms) — something on the path buffers event streams`,
        all,
      ),
    );
  }
  return pacedProbe(
    judged(
      label,
      x,
      'warn',
      `${label}: events produced ${spacedMs} ms apart arrived in clumps (${c.clumped} of ${c.events} within ${CLUMP_GAP_MS} ms of the one before, gaps up to ${c.longestGapMs} ms) — something on the path holds small writes a while`,
      all,
      HOLD_FIX,
    ),
  );
}

function pacedProbe(p: Probe): Probe {
  p.paced = true;
  return p;
}

/**
 * A pacing verdict short of 'ok' is checked by a second run before it is reported. A proxy that holds
 * or buffers event streams does it to every stream (HAProxy's held writes, nginx's buffers); a path
 * stalled for a moment (a proxy process starved of CPU on a loaded machine, a GC pause of the
 * server's) clumps one run and not the next. So: the second run 'ok' → 'ok', saying the first run
 * clumped; otherwise the first run's verdict stands, with the second's reason beside it.
 */
export async function confirmPacing(first: Probe, again: () => Promise<Probe>): Promise<Probe> {
  const v = first.verdict;
  if (first.paced !== true || v === undefined || v.status === 'ok') return first;
  const second = await again().catch((e: unknown): Probe => ({ label: first.label, note: errorText(e) }));
  const w = second.verdict;
  if (w?.status === 'ok') {
    const verdict: Verdict = {
      id: 'buffering',
      status: 'ok',
      reason: `${w.reason}; a first run clumped (${v.reason.replace(/ — .*$/, '')}) and did not repeat: a moment's stall, not the path's doing`,
      details: { ...w.details, firstRun: v.details ?? null },
    };
    return { ...second, verdict };
  }
  const verdict: Verdict = { ...v, details: { ...v.details, secondRun: w?.reason ?? second.note } };
  return { ...first, verdict };
}

/** `spacedMs`: the least spacing of the tool's progress events, when the probe knows it. */
function judgePost(
  label: string,
  x: Exchange,
  id: number,
  spacedMs: number | undefined,
  stalls: readonly StallWindow[],
): Probe {
  if (x.status !== 200) return { label, x, note: `${label} answered ${x.status}` };
  if (!x.isSse)
    return { label, x, note: `${label} came back as one JSON body (the server chose not to stream)` };
  const res = x.messages().find((m) => m.message['id'] === id);
  if (res === undefined) {
    return { label, x, note: `${label}: the stream ended without a result${x.error ? ` (${x.error})` : ''}` };
  }
  if (res.message['error'] !== undefined)
    return { label, x, note: `${label} failed: ${JSON.stringify(res.message['error'])}` };
  if (res.at < 800) return { label, x, note: `${label} answered in ${ms(res.at)}, too fast to judge` };
  const early = x.items.filter((i) => i.at < res.at - 250);
  const details = {
    probe: label,
    headMs: Math.round(x.headAt),
    firstEventMs: x.items[0] === undefined ? null : Math.round(x.items[0].at),
    resultMs: Math.round(res.at),
    itemsBeforeResult: early.length,
    items: x.items.length,
  };
  if (early.length > 0) {
    let all: Record<string, unknown> = details;
    if (spacedMs !== undefined) {
      const c = clumpsOf(x.progressTimes(), stalls);
      all = { ...details, ...c };
      const paced = judgePacing(label, x, spacedMs, c, all);
      if (paced !== undefined) return paced;
    }
    return judged(
      label,
      x,
      'ok',
      `${label}: first event after ${ms(early[0]?.at)}, result after ${ms(res.at)} — delivered as produced (${early.length} events before the result)`,
      all,
    );
  }
  return judged(
    label,
    x,
    'fail',
    `${label}: all ${x.items.length} events arrived in one lump after ${ms(res.at)} (response head after ${ms(x.headAt)}) — something on the path buffers event streams`,
    details,
  );
}

async function probeGet(s: McpSession): Promise<Probe> {
  const label = 'GET stream';
  let x: Exchange;
  try {
    x = await s.get();
  } catch (e) {
    const msg = errorText(e);
    if (/no response head/.test(msg)) {
      return judged(
        label,
        undefined,
        'fail',
        `${label}: no response head at all — a buffering proxy holds short responses until its buffer fills or the stream ends`,
      );
    }
    return { label, note: `${label}: ${msg}` };
  }
  if (x.status !== 200 || !x.isSse) {
    x.cancel();
    return { label, x, note: `${label} answered ${x.status} ${x.contentType}` };
  }
  await x.waitFor(() => x.firstByteAt !== undefined, 4_000);
  x.cancel();
  const details = { probe: label, headMs: Math.round(x.headAt), firstByteMs: x.firstByteAt ?? null };
  if (x.firstByteAt !== undefined) {
    return judged(
      label,
      x,
      'ok',
      `${label}: head after ${ms(x.headAt)}, first event after ${ms(x.firstByteAt)} (no slow tool to watch a longer stream)`,
      details,
    );
  }
  return judged(
    label,
    x,
    'warn',
    `${label}: head after ${ms(x.headAt)} but no bytes in 4 s — the server may send nothing on open, or the path buffers`,
    details,
  );
}

export async function checkStreaming(
  s: McpSession,
  tools: ToolInfo[],
  log: (l: string) => void,
): Promise<StreamingResult> {
  const notes: string[] = [];
  let chosen: Probe | undefined;
  let lastSse: Exchange | undefined;
  // `spaced`: the tool waits `ms` between progress events, so their arrival can be judged for clumps.
  const plan: { name: string; ms: number; count: number; spaced: boolean }[] = [
    { name: 'reindex', ms: PROGRESS_EVERY_MS, count: 40, spaced: true },
    { name: 'sleep', ms: 3_000, count: 1, spaced: false },
  ];
  for (const p of plan) {
    const tool = tools.find((t) => t.name === p.name);
    if (tool === undefined) continue;
    const args = argumentsFor(tool, p.ms, p.count);
    log(`streaming: calling ${p.name} ${JSON.stringify(args)}`);
    try {
      const spaced = p.spaced ? p.ms : undefined;
      const call = async (): Promise<Probe> => {
        // The doctor's own stalls during the call: what they explain is not the path's doing.
        const watch = new StallWatch();
        const { x, id } = await callToEnd(s, p.name, args, 30_000).finally(() => watch.stop());
        if (x.isSse) lastSse = x;
        return judgePost(`tools/call ${p.name}`, x, id, spaced, watch.stalls(x.startedAt));
      };
      const probe = await confirmPacing(await call(), () => {
        log(`streaming: the events came in clumps; calling ${p.name} once more to see if it repeats`);
        return call();
      });
      if (probe.verdict !== undefined) {
        chosen = probe;
        break;
      }
      notes.push(probe.note);
    } catch (e) {
      notes.push(`${p.name}: ${errorText(e)}`);
    }
  }
  if (chosen === undefined) {
    log('streaming: watching the GET stream');
    const probe = await probeGet(s);
    if (probe.x?.isSse) lastSse = probe.x;
    if (probe.verdict !== undefined) chosen = probe;
    else notes.push(probe.note);
  }
  const buffering: Verdict = chosen?.verdict ?? {
    id: 'buffering',
    status: 'skip',
    reason: `no stream to judge (${notes.join('; ') || 'no reindex or sleep tool, no GET stream'})`,
  };
  if (notes.length > 0 && chosen !== undefined) buffering.details = { ...buffering.details, skipped: notes };
  return {
    buffering,
    headers: checkHeaders(lastSse),
    compression: await checkCompression(
      s,
      tools.find((t) => t.name === 'reindex'),
      lastSse,
      buffering,
      log,
    ),
  };
}

function checkHeaders(x: Exchange | undefined): Verdict {
  if (x === undefined)
    return { id: 'headers', status: 'skip', reason: 'no event-stream response to inspect' };
  const cc = x.headers.get('cache-control');
  const xab = x.headers.get('x-accel-buffering');
  const details = { cacheControl: cc, xAccelBuffering: xab };
  const accel =
    xab === null
      ? 'X-Accel-Buffering absent (normal behind nginx, which consumes X-Accel-* headers; the buffering check is what counts)'
      : `X-Accel-Buffering: ${xab} reached the client`;
  if (cc === null || !/no-transform/i.test(cc)) {
    return {
      id: 'headers',
      status: 'warn',
      reason: `Cache-Control ${cc === null ? 'missing' : `is "${cc}"`}: no-transform did not survive, so transforming or compressing proxies may buffer; ${accel}`,
      details,
      fix: {
        server: 'send `Cache-Control: no-cache, no-transform` on event streams (Sluice does)',
        nginx:
          'do not override Cache-Control on the MCP location (`proxy_hide_header`/`add_header Cache-Control`)',
      },
    };
  }
  return { id: 'headers', status: 'ok', reason: `Cache-Control: ${cc} survived; ${accel}`, details };
}
