/**
 * A bounded, mixed load on running `sluice serve` instances, for the observability tests and the
 * screenshot script: it makes every family of the dashboard move. Each round opens a session on one
 * instance and then, through every instance (a non-owner forwards), calls echo, sleep and
 * tools/list; streams a progress flood and resumes it (a replay served); presents a malformed
 * cursor (a replay declined); sends a request from a foreign Origin (a refusal); reads a large
 * flood slowly (write stalls, queue depth); and ends the session. Rounds stop at `rounds` or at
 * `deadlineMs`, whichever comes first; every request has its own deadline.
 */
import { ACCEPT_BOTH, notification, RawSession, rpc, send, sleep, toolCall } from './http.js';

export interface LoadOptions {
  /** At most this many rounds. */
  readonly rounds: number;
  /** Stop starting rounds after this long (ms). */
  readonly deadlineMs: number;
  /** Pause between rounds (ms). @defaultValue 0 */
  readonly pauseMs?: number;
  /** Read the large flood slowly in every n-th round (0: never). @defaultValue 2 */
  readonly slowEvery?: number;
  /** Stop early when this signal aborts. */
  readonly signal?: AbortSignal;
}

export interface LoadSummary {
  rounds: number;
  calls: number;
  replaysServed: number;
  replaysDeclined: number;
  refusals: number;
  slowReads: number;
}

/** The same session, addressed through another instance. */
function via(s: RawSession, url: string): RawSession {
  const v = new RawSession(url, s.extra);
  v.sid = s.sid;
  v.version = s.version;
  return v;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`load: ${what}`);
}

export async function driveLoad(urls: readonly string[], o: LoadOptions): Promise<LoadSummary> {
  check(urls.length > 0, 'no URL');
  const sum: LoadSummary = {
    rounds: 0,
    calls: 0,
    replaysServed: 0,
    replaysDeclined: 0,
    refusals: 0,
    slowReads: 0,
  };
  const end = Date.now() + o.deadlineMs;
  const slowEvery = o.slowEvery ?? 2;
  for (let round = 0; round < o.rounds && Date.now() < end && o.signal?.aborted !== true; round++) {
    const owner = urls[round % urls.length] as string;
    const s = new RawSession(owner);
    await s.init();
    for (const url of urls) {
      const v = via(s, url);
      for (let i = 0; i < 4; i++) {
        const r = await v.post(toolCall('echo', { text: `r${round}-${i}` }));
        check(r.status === 200, `echo via ${url}: ${r.status} ${r.text.slice(0, 200)}`);
        sum.calls++;
      }
      const slept = await v.post(toolCall('sleep', { ms: 5 + (round % 4) * 20 }));
      check(slept.status === 200, `sleep: ${slept.status}`);
      const listed = await v.post(rpc('tools/list'));
      check(listed.status === 200, `tools/list: ${listed.status}`);
      sum.calls += 2;
    }
    // A progress stream through the last instance, then a resume from its first event: served.
    const streamVia = via(s, urls[urls.length - 1] as string);
    const flood = await streamVia.postOpen(toolCall('flood', { count: 40 }, `f${round}`, `t${round}`));
    check(flood.status === 200 && flood.isSse, `flood: ${flood.status}`);
    await flood.finished(10_000, 'flood body');
    const first = flood.events.find((e) => e.id !== undefined && e.data !== '')?.id;
    check(first !== undefined, 'flood carried no event id');
    const resumed = await streamVia.get({ 'last-event-id': first as string });
    check(resumed.status === 200, `resume: ${resumed.status}`);
    await resumed.waitFor((r) => r.messages().some((m) => m.id === `f${round}`), 10_000, 'replayed result');
    resumed.destroy();
    sum.replaysServed++;
    // A cursor that is not one of ours: declined (malformed).
    const bad = await s.get({ 'last-event-id': 'not-a-sluice-cursor' });
    await bad.finished(5_000, 'declined resume');
    check(bad.status >= 400, `malformed cursor answered ${bad.status}`);
    sum.replaysDeclined++;
    // A browser page from another origin: refused (403 origin).
    const foreign = await send(owner, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, origin: 'https://evil.example' },
      body: JSON.stringify(notification('notifications/initialized')),
    });
    check(foreign.status === 403, `foreign origin answered ${foreign.status}`);
    sum.refusals++;
    if (slowEvery > 0 && round % slowEvery === 0) {
      // A reader that stops reading: the socket fills, the server waits for 'drain' (a write
      // stall) and queues (queue depth), then the reader catches up and the call completes.
      const big = await s.postOpen(
        toolCall('flood', { count: 200, payloadBytes: 65536 }, `b${round}`, `bt${round}`),
      );
      check(big.status === 200, `slow flood: ${big.status}`);
      big.res.pause();
      await sleep(400);
      big.res.resume();
      // Waiting for the end (the stream closes after the result) rather than re-parsing every
      // message at every chunk of a 13 MB body.
      await big.finished(20_000, 'slow flood body');
      check(big.messages().at(-1)?.id === `b${round}`, 'slow flood ended without its result');
      sum.slowReads++;
    }
    const gone = await s.delete();
    check(gone.status === 200 || gone.status === 204, `delete: ${gone.status}`);
    sum.rounds++;
    if ((o.pauseMs ?? 0) > 0) await sleep(o.pauseMs ?? 0);
  }
  return sum;
}

/** Opens an SSE GET stream on a fresh session and keeps it open until `close()`: a live stream count. */
export async function holdStream(url: string): Promise<{ close(): Promise<void> }> {
  const s = new RawSession(url);
  await s.init();
  const g = await s.get();
  check(g.status === 200 && g.isSse, `GET stream: ${g.status}`);
  return {
    async close() {
      g.destroy();
      await s.delete().catch(() => undefined);
    },
  };
}
