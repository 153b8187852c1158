/**
 * What the proxy tests (nginx-proxy, proxies) check of a stream that crossed a proxy, timed on the
 * client: progress arriving event by event rather than in a lump, and when the result came. The
 * margins are wide enough for a loaded CI machine but far below what buffering would produce.
 */
import assert from 'node:assert/strict';
import { type Exchange, errorText } from '../../src/doctor/http.js';
import { type McpSession, responseOf } from '../../src/doctor/session.js';
import { readAfterStall, StallWatch, type StallWindow } from '../../src/doctor/stall-watch.js';
import { withDeadline } from './deadline.js';

/** tools/call with a progress token; resolves at the response head. */
export function callTool(
  s: McpSession,
  name: string,
  args: Record<string, unknown>,
  id: number,
): Promise<Exchange> {
  return withDeadline(
    s.request('tools/call', { name, arguments: args, _meta: { progressToken: `p${id}` } }, id),
    10_000,
    `${name} response head`,
  );
}

export function progressTimes(x: Exchange): number[] {
  return x
    .messages()
    .filter((m) => m.message['method'] === 'notifications/progress')
    .map((m) => m.at);
}

export function resultTime(x: Exchange, id: number): number | undefined {
  return x.messages().find((m) => m.message['id'] === id)?.at;
}

/**
 * reindex: 10 progress notifications 100 ms apart; asserts they arrived one by one. The arrival times
 * are read by this process, which also runs the server: when its own event loop stalls (a loaded
 * machine), events the proxy passed on at once are read together, which looks like a proxy holding
 * them. So the loop's stalls are recorded during the call; a call during which it stalled for more
 * than 80 ms (most of the 100 ms between events) measured the machine, not the proxy, and is made
 * again, up to three times. On the third, every check holds, except that events read together right
 * after one of this process's own stalls are not counted as a clump (a CI run saw a 918 ms stall on
 * all three attempts): a proxy that holds events clumps them with no stall of ours to explain it.
 * The proxy is a process of its own, and can be starved too (a CI run saw four events held 400 ms
 * by nginx once, with this process stalled 78 ms): a call whose timing fails is made again as well,
 * up to three times. A proxy that holds events holds them on every call, so it still fails all three.
 */
/** A stall longer than this measured the machine, not the proxy (most of the 100 ms between events). */
const RETRY_AFTER_STALL_MS = 80;

export async function assertIncremental(s: McpSession, label: string): Promise<Exchange> {
  for (let attempt = 1; ; attempt++) {
    const id = 7 + 100 * (attempt - 1);
    const watch = new StallWatch();
    let x: Exchange;
    try {
      x = await callTool(s, 'reindex', { corpus: 'proxied', docs: 10, delayMs: 100 }, id);
      await withDeadline(x.done, 10_000, `${label}: reindex stream end`);
    } finally {
      watch.stop();
    }
    const stalledMs = watch.longest;
    if (stalledMs > RETRY_AFTER_STALL_MS && attempt < 3) {
      process.stderr.write(
        `${label}: this process stalled ${stalledMs.toFixed(0)} ms during the call; again\n`,
      );
      continue;
    }
    const failed = incrementalFailure(
      x,
      id,
      `${label}${attempt > 1 ? ` (attempt ${attempt}, stall ${stalledMs.toFixed(0)} ms)` : ''}`,
      watch.stalls(x.startedAt),
    );
    if (failed === undefined) return x;
    if (attempt < 3) {
      process.stderr.write(`${failed}; again\n`);
      continue;
    }
    assert.fail(failed);
  }
}

/** Why the run does not show events arriving one by one (undefined when it does). */
function incrementalFailure(
  x: Exchange,
  id: number,
  label: string,
  stalls: readonly StallWindow[],
): string | undefined {
  // Not a matter of timing: failed at once.
  assert.equal(x.status, 200);
  assert.ok(x.isSse, `${label}: the answer is an event stream (got ${x.contentType})`);
  const times = progressTimes(x);
  const end = resultTime(x, id);
  const detail = `${label}: progress at [${times.map((t) => t.toFixed(0)).join(', ')}] ms, result at ${end?.toFixed(0)} ms`;
  assert.equal(times.length, 10, detail);
  if (end === undefined || end < 900) return `the result after the run; ${detail}`;
  // Relative to the run, not to the clock: a loaded machine delays the whole call (CI saw the first
  // event at 401 ms, the next nine 100 ms apart after it), a buffering proxy delays the events to the end.
  if (!((times[0] ?? Infinity) < end - 500)) return `first progress well before the result; ${detail}`;
  // Not one lump: the events are spread over the run, not bunched at the end.
  const spread = (times[times.length - 1] ?? 0) - (times[0] ?? 0);
  if (!(spread > 600)) return `progress spread over the run; ${detail}`;
  // Nor in clumps: sent 100 ms apart, events arriving together were held on the way (a machine
  // stalled once may join a pair; a proxy holding writes joins most of them).
  const stallNote =
    stalls.length === 0
      ? ''
      : `; this process stalled at ${stalls.map((w) => `${w.from.toFixed(0)}–${w.to.toFixed(0)}`).join(', ')} ms`;
  if (clumped(times, stalls) > 2) return `events one by one, not in clumps; ${detail}${stallNote}`;
  return undefined;
}

/**
 * How many events arrived within 30 ms of the one before, not counting those read together right
 * after one of `stalls` (windows of this process's own stalls, in the same time as `times`).
 */
export function clumped(times: readonly number[], stalls: readonly StallWindow[] = []): number {
  let n = 0;
  for (let i = 1; i < times.length; i++) {
    const t = times[i] ?? 0;
    if (t - (times[i - 1] ?? 0) < 30 && !readAfterStall(t, stalls)) n++;
  }
  return n;
}

/**
 * With keepalive off and a proxy idle timeout of 1 s: a 3 s quiet call's stream is cut at the proxy
 * about a second after its priming event, with no result; resuming with `Last-Event-ID` (again and
 * again, as each quiet GET is cut too, always from the newest id seen) brings the result exactly once.
 */
export async function assertCutThenResumed(session: McpSession, proxy: string): Promise<void> {
  const x = await callTool(session, 'sleep', { ms: 3_000 }, 9);
  await withDeadline(x.done, 10_000, 'the quiet stream ends');
  const priming = x.items.find((i) => i.kind === 'event' && i.data === '');
  assert.ok(priming?.id, `a priming event with an id came first: ${JSON.stringify(x.items)}`);
  assert.equal(resultTime(x, 9), undefined, 'no result on the cut stream');
  const cutAfter = (x.endAt ?? 0) - priming.at;
  assert.ok(
    cutAfter > 800 && cutAfter < 2_500,
    `cut at ${proxy} ~1 s after the last byte (${cutAfter.toFixed(0)} ms)`,
  );
  let last = priming.id;
  let result: Record<string, unknown> | undefined;
  let seen = 0;
  let resumes = 0;
  let lostOpens = 0;
  const deadline = performance.now() + 10_000;
  while (result === undefined && performance.now() < deadline) {
    resumes++;
    let g: Exchange;
    try {
      g = await withDeadline(session.get({ 'last-event-id': last }), 5_000, 'resume head');
    } catch (e) {
      // The keep-alive connection the resume went out on was closed by the proxy as it was reused
      // (its idle timeout is as short as the cuts): no answer came, so nothing was delivered; a
      // client opens the resume again, as after a cut (CI saw UND_ERR_SOCKET here once).
      if (!/UND_ERR_SOCKET|ECONNRESET|socket hang up|other side closed/i.test(errorText(e))) throw e;
      lostOpens++;
      continue;
    }
    assert.equal(g.status, 200, `resume: ${g.status} ${g.text}`);
    await withDeadline(g.done, 5_000, 'resumed stream end');
    for (const i of g.items) if (i.kind === 'event' && i.id !== undefined && i.id !== '') last = i.id;
    seen += g.messages().filter((m) => m.message['id'] === 9).length;
    result = responseOf(g, 9);
  }
  assert.ok(
    result !== undefined,
    `the result arrived after ${resumes} resume(s) through ${proxy} (${lostOpens} lost before an answer)`,
  );
  assert.equal(seen, 1, 'delivered exactly once');
  assert.deepEqual(result['result'], { content: [{ type: 'text', text: 'slept 3000' }] });
}
