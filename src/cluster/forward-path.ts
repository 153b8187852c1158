/**
 * The non-owner's side of the hop: a request for a session another instance owns is looked up in
 * the directory (cached), signed, forwarded to the owner and relayed back (forwarder.ts). When the
 * owner cannot answer, the lease decides between 503 (it may be back in a moment) and 404 (it is
 * gone: the client re-initializes), and a GET resume may be served from the frame copy
 * (orphan-resume.ts). See docs/scale-out.md.
 */
import type { Histogram } from '../core/observe/histogram.js';
import type { HopTracer } from '../core/observe/hop-trace.js';
import { type Refusal, Refusals, sendRefusal } from '../core/pipeline/refusal.js';
import { type Directory, type DirectoryEntry, principalHash } from './directory.js';
import type { DirectoryCache } from './directory-cache.js';
import { FORWARD_HEADER, signForward } from './forward-auth.js';
import type { Forwarder } from './forwarder.js';
import type { Lease } from './lease.js';
import { resumeFromCopy } from './orphan-resume.js';
import type { EventReplica } from './replica.js';
import type { ClusterCounters, RouteInput } from './route-input.js';

/** What the forward path reads of its cluster (live values: the cluster fills them in as it joins). */
export interface ForwardContext {
  readonly incarnation: string;
  readonly leaseMs: number;
  readonly directory: Directory | undefined;
  readonly lease: Lease | undefined;
  readonly replica: EventReplica | undefined;
  /** The hop's HMAC key; undefined until the cluster has joined. */
  readonly secret: string | undefined;
  readonly cache: DirectoryCache;
  readonly forwarder: Forwarder;
  readonly counters: ClusterCounters;
  readonly forwardLatency: Histogram;
  /** Trace context (and span) of each hop. */
  hops(): HopTracer;
}

/** Answers `r` for session `sid`, owned elsewhere: relayed from its owner, or refused. */
export async function forwardToOwner(c: ForwardContext, r: RouteInput, sid: string): Promise<'handled'> {
  const sink = r.sink;
  const entry = await ownerOf(c, r, sid);
  if (entry === undefined) return 'handled';
  // Someone else's session, or one this instance owned and has ended: 404 here, no hop.
  if (entry.principal !== principalHash(r.principal) || entry.owner === c.incarnation) {
    sendRefusal(sink, Refusals.sessionNotFound(), r.headers);
    return 'handled';
  }
  const secret = c.secret;
  if (secret === undefined) {
    sendRefusal(sink, Refusals.clusterUnavailable(), r.headers);
    return 'handled';
  }
  const lastEventId = r.view.headers['last-event-id'];
  const signature = signForward(secret, {
    method: r.method,
    sessionId: sid,
    from: c.incarnation,
    to: entry.owner,
    lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
    body: r.body,
  });
  const t0 = performance.now();
  c.counters.add('forwardedOut');
  const hop = c.hops().begin((n) => r.view.header(n), entry.address, r.method);
  const outcome = await c.forwarder.forward(
    {
      target: entry.address,
      method: r.method,
      headers: r.view.headers,
      body: r.body,
      extra: { ...hop.headers, [FORWARD_HEADER]: signature },
      intercept: (status, reason) => status === 421 || refusedHop(status, reason),
      owner: entry.owner,
    },
    r.req,
    r.res,
  );
  hop.end(
    outcome.kind === 'answered' ? outcome.status : undefined,
    outcome.kind === 'unreachable' ? outcome.error : undefined,
  );
  if (outcome.kind === 'answered' && refusedHop(outcome.status, outcome.reason)) {
    // The owner refused the hop itself: the members' keys differ (a new member keyed an emptied
    // Redis before the others re-offered theirs, docs/scale-out.md "The hop") or their clocks are
    // more than the window apart. Not the client's doing: a 403 would read as its credentials
    // refused. 503: the keys agree again within a third of a lease.
    c.counters.add('forwardFailed');
    sendRefusal(sink, Refusals.ownerUnavailable(), r.headers);
    return 'handled';
  }
  if (outcome.kind === 'answered' && outcome.status !== 421) {
    c.forwardLatency.observe((performance.now() - t0) / 1000);
    if (outcome.status === 404) c.cache.delete(sid);
    return 'handled';
  }
  if (outcome.kind === 'client-gone') return 'handled';
  // The owner could not be reached, or something else now answers at its address (421).
  c.counters.add('forwardFailed');
  c.cache.delete(sid);
  const left = outcome.kind === 'answered' ? 0 : await c.lease?.remainingMs(entry.owner);
  const alive = left === undefined ? undefined : left > 0;
  const cursor = r.view.headers['last-event-id'];
  if (r.method === 'GET' && typeof cursor === 'string' && c.replica !== undefined) {
    // A finished stream (or, once the owner is known dead, an unfinished one) resumes from the copy.
    const served = await resumeFromCopy(c.replica, sink, r.headers, sid, entry.tag, cursor, alive);
    if (served === 'owner-lost') c.counters.add('ownerLostResumes');
    if (served !== 'not-here') return 'handled';
  }
  // Lease still valid (or Redis cannot tell): the owner may be back in a moment — 503. Lapsed: 404,
  // and the client re-initializes on a live instance.
  if (alive === false) sendRefusal(sink, Refusals.sessionNotFound(), r.headers);
  else {
    // A reset on a pooled socket right after a kill -9 is not a refusal yet the process is gone:
    // a fresh connect tells (no request is sent again), so Retry-After can name the lease's end.
    const gone =
      outcome.kind === 'unreachable' &&
      (outcome.refused || (await c.forwarder.refusesConnections(entry.address)));
    sendRefusal(sink, ownerUnavailableFor(gone, left), r.headers);
  }
  return 'handled';
}

/** The session's directory entry (cached), or undefined once `r` was answered with a refusal. */
async function ownerOf(c: ForwardContext, r: RouteInput, sid: string): Promise<DirectoryEntry | undefined> {
  const sink = r.sink;
  const cached = c.cache.get(sid);
  if (cached !== undefined) {
    c.counters.add('directoryHits');
    return cached;
  }
  const dir = c.directory;
  if (dir === undefined) {
    sendRefusal(sink, Refusals.clusterUnavailable(), r.headers);
    return undefined;
  }
  let entry: DirectoryEntry | undefined;
  let runSince: number | undefined;
  try {
    entry = await dir.lookup(sid);
    // Only a miss needs to know when Redis last lost its data (below).
    if (entry === undefined) runSince = await dir.runSince();
  } catch {
    // Never 404 because Redis failed: that would send every client into re-initialization at once.
    c.counters.add('directoryErrors');
    sendRefusal(sink, Refusals.clusterUnavailable(), r.headers);
    return undefined;
  }
  if (entry === undefined) {
    c.counters.add('directoryMisses');
    if (runSince === undefined || Date.now() - runSince < c.leaseMs / 2) {
      // Redis lost its data moments ago and the owners are re-registering (each does within a
      // third of the lease): a miss now proves nothing. 503, never a 404 storm.
      void c.lease?.refresh();
      sendRefusal(sink, Refusals.clusterUnavailable(), r.headers);
      return undefined;
    }
    sendRefusal(sink, Refusals.sessionNotFound(), r.headers);
    return undefined;
  }
  c.cache.set(sid, entry);
  return entry;
}

/**
 * 503 for an owner whose lease holds. When nothing listens at its address (connection refused) the
 * process there is gone or not yet serving, and the answer that settles the request (404, then a
 * re-initialization) comes when the lease lapses: `Retry-After` says when, so a client's single
 * retry of a 503 (RFC 9110 §10.2.3) lands after it instead of 1 s later on the same 503. Any other
 * failure (a timeout, a reset while the address still accepts) may be a moment's trouble of a live owner: 1 s.
 */
function ownerUnavailableFor(gone: boolean, leftMs: number | undefined): Refusal {
  const r = Refusals.ownerUnavailable();
  if (!gone || leftMs === undefined || !Number.isFinite(leftMs)) return r;
  return { ...r, headers: { ...r.headers, 'retry-after': String(Math.max(1, Math.ceil(leftMs / 1000))) } };
}

/** The owner's answer refuses the hop's signature (accept-forwarded.ts), not the client's request. */
function refusedHop(status: number, reason: string | undefined): boolean {
  return status === 403 && reason === 'forward-forbidden';
}
