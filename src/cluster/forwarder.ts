/**
 * The hop to the owner: replays the client's request on a pooled keep-alive connection to the
 * owner's advertised URL and pipes the answer back as it arrives. `pipe` stops reading from the
 * owner while the client's socket is full, so TCP carries backpressure end to end: a slow client
 * slows the owner's SSE writer (which coalesces and paces exactly as it does for a direct client),
 * and this instance holds no more than the sockets' buffers. When the client goes away the upstream
 * request is destroyed, so the owner sees the disconnect just as it would directly.
 */
import {
  Agent,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';
import { connect } from 'node:net';
import { lateDeadline } from '../flow/late-deadline.js';
import { REFUSAL_HEADER } from './accept-forwarded.js';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and what the hop recomputes. */
const DROP_REQUEST = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'upgrade',
  'trailer',
  'content-length',
  'proxy-authorization',
  // Recomputed by the hop: only valid W3C values go on (core/observe/hop-trace.ts).
  'traceparent',
  'tracestate',
  'baggage',
]);
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade']);

/** Added to every relayed answer. */
export const ROUTE_HEADER = 'sluice-route';

export type ForwardOutcome =
  /** The owner answered (status relayed, body streaming or done). */
  | { kind: 'answered'; status: number; reason: string | undefined }
  /**
   * No answer came: the owner could not be reached, or the connection broke before a status.
   * `refused`: nothing listens at its address (ECONNREFUSED), so no process there can answer.
   */
  | { kind: 'unreachable'; error: string; refused: boolean }
  /** The client went away before the owner answered. */
  | { kind: 'client-gone' };

export interface ForwardRequest {
  target: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Headers the hop adds (the signature). */
  extra: Record<string, string>;
  /**
   * Consulted when the owner's status is known, before anything is relayed: returning true keeps
   * the answer from the client (the caller answers instead, e.g. after a 421).
   */
  intercept?: (status: number, reason: string | undefined) => boolean;
  /** The owner's incarnation, whose lease the watch reads while the hop is not finished. */
  owner?: string;
}

/**
 * While a hop is not finished (no status yet, or its answer still streaming), how it learns that
 * the owner is gone for good. A frozen owner (SIGSTOP) or a host that lost power sends no RST: a
 * request written on a pooled socket would wait, and a relayed stream stay open, as long as TCP
 * does (minutes, or for ever). Its lease lapses instead (docs/scale-out.md, "Failure semantics": the
 * lease tells dead from slow), and the hop then ends as if the connection had broken: no status
 * yet, the caller answers by the lease; mid-answer, the client's stream is cut and it resumes (from
 * the copy, with owner-lost for what the stream had not answered).
 */
export interface LeaseWatch {
  /** How long a hop waits before its owner's lease is read, and then how often. */
  everyMs: number;
  /** True once the owner's lease has lapsed; false while it holds or when Redis cannot say. */
  lapsed(owner: string): Promise<boolean>;
}

/** A hop not finished yet. */
interface Waiting {
  owner: string;
  target: string;
  since: number;
  cut: () => void;
}

interface Peer {
  protocol: string;
  hostname: string;
  port: string;
  path: string;
  agent: Agent;
}

export class Forwarder {
  readonly #agents = new Map<string, Agent>();
  readonly #peers = new Map<string, Peer>();
  readonly #connectTimeoutMs: number;
  readonly #watch: LeaseWatch | undefined;
  /** Hops not finished (a Set add and delete per hop; one timer for all, only while there are any). */
  readonly #waiting = new Set<Waiting>();
  #watchTimer: ReturnType<typeof setInterval> | undefined;
  #watching = false;

  constructor(o: { connectTimeoutMs?: number; leaseWatch?: LeaseWatch } = {}) {
    this.#connectTimeoutMs = o.connectTimeoutMs ?? 2_000;
    this.#watch = o.leaseWatch;
  }

  /** Forwards and relays. Resolves when the owner's status is known (the body may still be streaming). */
  forward(f: ForwardRequest, req: IncomingMessage, res: ServerResponse): Promise<ForwardOutcome> {
    // The client left while the owner was looked up: its 'close' has fired already and would never
    // reach the listener below, so a hop opened now would stream the owner's answer into nothing
    // (an SSE stream held open at the owner until it overflows).
    if (res.destroyed) return Promise.resolve({ kind: 'client-gone' });
    const peer = this.#peerOrUndefined(f.target);
    // An address no member could have advertised (an entry cut short, or of another release):
    // nothing can answer there, so the lease decides between 503 and 404, never a 500.
    if (peer === undefined)
      return Promise.resolve({
        kind: 'unreachable',
        error: `bad owner address '${f.target}'`,
        refused: false,
      });
    // One pass over the client's headers, no intermediate entry arrays (this runs per request).
    const headers: Record<string, string | string[]> = {};
    const from = f.headers;
    for (const k in from) {
      const v = from[k];
      if (v !== undefined && !DROP_REQUEST.has(k)) headers[k] = v;
    }
    for (const k in f.extra) headers[k] = f.extra[k] as string;
    if (f.body.length > 0 || f.method === 'POST')
      headers['content-length'] = String(Buffer.byteLength(f.body));
    return new Promise<ForwardOutcome>((resolve) => {
      let settled = false;
      let waiting: Waiting | undefined;
      const done = (): void => {
        if (waiting !== undefined) this.#waiting.delete(waiting);
      };
      const settle = (o: ForwardOutcome): void => {
        if (settled) return;
        settled = true;
        if (o.kind !== 'answered') done();
        resolve(o);
      };
      const up = request({
        protocol: peer.protocol,
        hostname: peer.hostname,
        port: peer.port,
        path: peer.path,
        method: f.method,
        headers,
        agent: peer.agent,
      });
      if (this.#watch !== undefined && f.owner !== undefined) {
        waiting = {
          owner: f.owner,
          target: f.target,
          since: Date.now(),
          cut: () => up.destroy(new Error('owner lease lapsed')),
        };
        this.#waiting.add(waiting);
        up.once('close', done);
        this.#watchTimer ??= setInterval(() => void this.#checkLeases(), this.#watch.everyMs);
        this.#watchTimer.unref?.();
      }
      /** The owner's answer is being relayed onto `res` (not kept back by `intercept`). */
      let relaying = false;
      const onClientGone = (): void => {
        if (!res.writableFinished) up.destroy();
        settle({ kind: 'client-gone' });
      };
      res.once('close', onClientGone);
      up.once('socket', (s) => {
        if (!s.connecting) return;
        const t = lateDeadline(() => up.destroy(new Error('connect timeout')), this.#connectTimeoutMs);
        s.once('connect', () => t.clear());
        s.once('close', () => t.clear());
      });
      up.once('error', (e) => {
        if (!settled) {
          res.off('close', onClientGone);
          settle({
            kind: 'unreachable',
            error: e.message,
            refused: (e as NodeJS.ErrnoException).code === 'ECONNREFUSED',
          });
        } else if (relaying && !res.writableEnded) {
          // Cut mid-answer (the owner died): cut the client too, so it resumes from its last event id.
          // (Not for an intercepted answer: the caller answers on `res` itself.)
          res.destroy();
        }
      });
      up.once('response', (answer) => {
        const status = answer.statusCode ?? 502;
        if (status < 200) {
          // Node's parser passes any three digits on, but `writeHead` throws below 100 (an uncaught
          // exception in this listener: the relay's process died), and a 1xx is never a final answer
          // (RFC 9110 §15.2). Not an answer from a Sluice owner: as if none came (503, then 404).
          res.off('close', onClientGone);
          up.destroy();
          settle({ kind: 'unreachable', error: `invalid status ${status} from the owner`, refused: false });
          return;
        }
        const reason = answer.headers[REFUSAL_HEADER] as string | undefined;
        if (f.intercept?.(status, reason) === true) {
          answer.resume();
          res.off('close', onClientGone);
          settle({ kind: 'answered', status, reason });
          return;
        }
        const out: Record<string, string | string[]> = {};
        const got = answer.headers;
        for (const k in got) {
          const v = got[k];
          if (v !== undefined && !DROP_RESPONSE.has(k)) out[k] = v;
        }
        // Tells a client (and `sluice doctor`) that another instance answered: owner routing is in use.
        out[ROUTE_HEADER] = 'forwarded';
        relaying = true;
        res.writeHead(status, out);
        if ((answer.headers['content-type'] ?? '').startsWith('text/event-stream')) res.flushHeaders();
        answer.once('close', done);
        answer.on('aborted', () => res.destroy());
        answer.on('error', () => res.destroy());
        answer.pipe(res);
        settle({ kind: 'answered', status, reason });
      });
      up.end(f.body.length > 0 ? f.body : undefined);
      void req; // the client's body was read by the handler already (it is signed)
    });
  }

  /**
   * Whether nothing listens at `target` now (a fresh TCP connect is refused). A hop that failed on a
   * pooled keep-alive socket reports a reset, not a refusal, even when the owner was killed: this
   * tells the two apart without sending the request again. Resolves false on connect, on any other
   * error and at the connect deadline (a moment's trouble of a live owner looks like that).
   */
  refusesConnections(target: string): Promise<boolean> {
    const peer = this.#peerOrUndefined(target);
    if (peer === undefined) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const s = connect({ host: peer.hostname, port: Number(peer.port) || 80 });
      const done = (refused: boolean): void => {
        t.clear();
        s.destroy();
        resolve(refused);
      };
      const t = lateDeadline(() => done(false), this.#connectTimeoutMs);
      s.once('connect', () => done(false));
      s.once('error', (e) => done((e as NodeJS.ErrnoException).code === 'ECONNREFUSED'));
    });
  }

  /** Ends the hops of owners whose lease lapsed before the hop finished (LeaseWatch). */
  async #checkLeases(): Promise<void> {
    const watch = this.#watch;
    if (watch === undefined || this.#watching) return;
    if (this.#waiting.size === 0) {
      clearInterval(this.#watchTimer);
      this.#watchTimer = undefined;
      return;
    }
    this.#watching = true;
    try {
      const due = Date.now() - watch.everyMs;
      const owners = new Map<string, string>();
      for (const w of this.#waiting) if (w.since <= due) owners.set(w.owner, w.target);
      for (const [owner, target] of owners) {
        if (!(await watch.lapsed(owner).catch(() => false))) continue;
        // A lapsed lease with a live owner (its own link to Redis is down; it keeps serving,
        // docs/scale-out.md "Choices made") answers a request: its hops are left alone.
        if (await this.#answers(target)) continue;
        for (const w of [...this.#waiting]) if (w.owner === owner && w.since <= due) w.cut();
      }
    } finally {
      this.#watching = false;
    }
  }

  /**
   * Whether the process at `target` answers an OPTIONS (any status) on a fresh connection within the
   * connect deadline: a frozen process accepts connections (the kernel does) but answers nothing.
   */
  #answers(target: string): Promise<boolean> {
    const peer = this.#peerOrUndefined(target);
    if (peer === undefined) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const probe = request({
        hostname: peer.hostname,
        port: peer.port,
        path: peer.path,
        method: 'OPTIONS',
        agent: false,
      });
      const done = (alive: boolean): void => {
        t.clear();
        probe.destroy();
        resolve(alive);
      };
      // A frozen owner is told from a live one by this deadline: a stall of this process must not
      // make a live owner look frozen (flow/late-deadline.ts).
      const t = lateDeadline(() => done(false), this.#connectTimeoutMs);
      probe.once('response', () => done(true));
      probe.on('error', () => done(false));
      probe.end();
    });
  }

  close(): void {
    clearInterval(this.#watchTimer);
    this.#watchTimer = undefined;
    for (const a of this.#agents.values()) a.destroy();
    this.#agents.clear();
    this.#peers.clear();
  }

  /** Keep-alive agents held, one per owner address (for tests and stats). */
  get agents(): number {
    return this.#agents.size;
  }

  /** Forgets every parsed address, and the agents with no request in flight or queued. */
  #forgetIdle(): void {
    this.#peers.clear();
    for (const [origin, a] of this.#agents) {
      if (Object.keys(a.sockets).length > 0 || Object.keys(a.requests).length > 0) continue;
      a.destroy(); // its idle keep-alive sockets
      this.#agents.delete(origin);
    }
  }

  /** The peer, or undefined when `target` is not an http:// URL with a valid port (checkAdvertise). */
  #peerOrUndefined(target: string): Peer | undefined {
    try {
      return this.#peer(target);
    } catch {
      return undefined;
    }
  }

  /**
   * The parsed target and its keep-alive agent, once per owner address (a cluster has a handful):
   * the hop does not parse the same URL on every request.
   */
  #peer(target: string): Peer {
    let p = this.#peers.get(target);
    if (p === undefined) {
      const url = new URL(target);
      // The hop is plain HTTP (members advertise http:// only): `request` throws on anything else.
      if (url.protocol !== 'http:') throw new TypeError(`not an http:// URL: ${target}`);
      // Bounded: directory entries name few distinct addresses at a time, but every restart of a
      // member may bring a new one (a pod IP): the agents of addresses with nothing in flight go too.
      if (this.#peers.size >= 1_024) this.#forgetIdle();
      let agent = this.#agents.get(url.origin);
      if (agent === undefined) {
        agent = new Agent({
          keepAlive: true,
          keepAliveMsecs: 1_000,
          maxSockets: 1_024,
          maxFreeSockets: 64,
          scheduling: 'lifo',
        });
        this.#agents.set(url.origin, agent);
      }
      p = {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port,
        path: url.pathname + url.search,
        agent,
      };
      this.#peers.set(target, p);
    }
    return p;
  }
}
