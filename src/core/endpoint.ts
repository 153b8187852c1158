/**
 * The root of the core: it builds the context both eras share (core/context.ts), the session era's
 * registry (era-2025/sessions.ts), the 2026-07-28 era (era-2026/era.ts) and the pipeline's checks
 * (pipeline/pipeline.ts) with a handler per method, then owns what spans all of them: the keepalive
 * timer, graceful close, and stats, asked of each owner. Nothing in the core imports this file;
 * the bindings (src/server/, src/fetch/) do.
 */
import type { ReplayResult } from '../events/event-store.js';
import type { ChangeBus } from './change-bus.js';
import type { ClusterHooks } from './cluster-hooks.js';
import { CoreContext } from './context.js';
import { handleDelete } from './era-2025/delete.js';
import { handleGet } from './era-2025/get.js';
import { handleSessionPost } from './era-2025/post.js';
import { Sessions } from './era-2025/sessions.js';
import { ModernEra } from './era-2026/era.js';
import { handleModernPost } from './era-2026/post.js';
import type { Metrics } from './observe/metrics.js';
import type { EndpointStats } from './observe/stats.js';
import { type ResolvedOptions, resolveOptions, type ServerOptions } from './options.js';
import { type Checks, createChecks, type MethodHandlers, type PipelineStages } from './pipeline/pipeline.js';
import { Refusals } from './pipeline/refusal.js';
import { routePost } from './pipeline/route.js';
import type { CreateServer } from './sdk/server-like.js';

export interface CloseReport {
  /** Sessions ended by the close. */
  sessions: number;
  /** Requests still running at the deadline, whose streams were cut (clients resume or retry). */
  cutRequests: number;
  /** Whether everything in flight finished before the deadline. */
  drained: boolean;
}

export interface Pipeline extends Checks {
  readonly endpoint: Endpoint;
  readonly options: ResolvedOptions;
}

/** Resolves the options once, builds the endpoint, and puts the pipeline's checks in front of it. */
export function createPipeline(
  createServer: CreateServer,
  options: ServerOptions,
  stages: PipelineStages = {},
): Pipeline {
  const o = resolveOptions(options);
  // `ep` is only read when a request arrives, after it was assigned.
  const hooks = stages.clusterHooks?.(o, {
    hasSession: (id) => ep.hasSession(id),
    frames: (id, stream) => ep.frames(id, stream),
  });
  const ep = new Endpoint(createServer, o, hooks);
  const checks = createChecks(o, ep.counters, ep.methods, stages.route, ep.operations);
  return { endpoint: ep, options: o, handle: checks.handle, fail: checks.fail };
}

export class Endpoint {
  readonly #ctx: CoreContext;
  readonly #sessions: Sessions;
  readonly #modern: ModernEra;
  #closed = false;
  /** The pipeline's handler per method, bound to this endpoint's eras. */
  readonly methods: MethodHandlers;

  constructor(createServer: CreateServer, options: ResolvedOptions, cluster?: ClusterHooks) {
    const ctx = new CoreContext(createServer, options, cluster);
    this.#ctx = ctx;
    this.#sessions = new Sessions(ctx);
    this.#modern = new ModernEra(ctx);
    const sessions = this.#sessions;
    const modern = this.#modern;
    const eras = {
      session: (
        input: Parameters<MethodHandlers['post']>[0],
        parsed: unknown,
        single: Parameters<typeof handleSessionPost>[3],
      ) => handleSessionPost(sessions, input, parsed, single),
      modern: (
        input: Parameters<MethodHandlers['post']>[0],
        verdict: Parameters<typeof handleModernPost>[2],
      ) => handleModernPost(modern, input, verdict),
    };
    this.methods = {
      post: (input) => routePost(input, eras),
      get: (head, auth, sink, headers, guard) => handleGet(sessions, head, auth, sink, headers, guard),
      delete: (head, auth, sink, headers) => handleDelete(sessions, head, auth, sink, headers),
    };
    ctx.live.startKeepalive(options.keepaliveMs, options.now, ctx.counters);
  }

  get options(): ResolvedOptions {
    return this.#ctx.options;
  }
  get counters(): CoreContext['counters'] {
    return this.#ctx.counters;
  }
  /** Per-request spans and semantic-convention metrics (observe/operations.ts). */
  get operations(): CoreContext['operations'] {
    return this.#ctx.operations;
  }
  /** The per-endpoint metrics (method labels, durations), when turned on. */
  get metrics(): Metrics | undefined {
    return this.#ctx.counters.metrics;
  }
  /** Where list changes are published (handler.notify) and listen streams subscribe. */
  get bus(): ChangeBus {
    return this.#ctx.bus;
  }

  /** What the event store holds of a stream from its start (a cluster writes its copy again from it). */
  frames(id: string, stream: number): ReplayResult | Promise<ReplayResult> {
    return this.#ctx.store.replay(id, stream, 0, { allowGap: true });
  }

  /** Whether this instance holds the session (a cluster asks before forwarding). */
  hasSession(id: string): boolean {
    return this.#sessions.has(id);
  }

  stats(options?: { perStream?: boolean }): EndpointStats {
    const perStream = options?.perStream === true;
    const census = this.#sessions.census(perStream);
    const counters = this.#ctx.counters;
    const c = counters.read();
    return {
      sessions: this.#sessions.stats(census),
      streams: {
        open: { post: this.#ctx.live.size - census.get, get: census.get },
        replaced: c.streamsReplaced,
        conflicts: c.streamConflicts,
      },
      responses: { json: c.responsesJson, sse: c.responsesSse },
      queue: this.#ctx.live.queues(),
      writeStall: { totalMs: c.writeStallMs, count: c.writeStalls },
      eventsWritten: c.eventsWritten,
      coalesced: c.coalesced,
      partialMerged: c.partialMerged,
      overflowCloses: c.overflowCloses,
      replays: { served: c.replaysServed, declined: counters.replaysDeclined.read() },
      eventStore: { errors: counters.storeErrors.read(), gaps: c.storeGaps },
      replayBuffer: this.#ctx.storeStats(),
      keepalivesSent: c.keepalivesSent,
      orphanAborts: c.orphanAborts,
      undeliverable: c.undeliverable,
      refusals: counters.refusals.read(),
      authRefusals: counters.authRefusals.read(),
      authStreamEnds: c.authStreamEnds,
      modern: this.#modern.stats(),
      tasks: this.#ctx.options.tasks?.stats?.() ?? null,
      ...(perStream ? { perStream: census.perStream } : {}),
    };
  }

  /**
   * Graceful close: refuse new sessions, let in-flight requests finish until graceMs, then end
   * every session; open streams get a `retry:` hint after their last event id so clients resume
   * against the next instance.
   */
  async close(graceMs = 0): Promise<CloseReport> {
    if (this.#closed) return { sessions: 0, cutRequests: 0, drained: true };
    const ctx = this.#ctx;
    ctx.beginClose();
    this.#modern.endListens();
    const now = ctx.options.now;
    const deadline = now() + graceMs;
    while (now() < deadline && this.#inflightCount() > 0) {
      await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, deadline - now()))));
    }
    const cutRequests = this.#inflightCount();
    const sessions = this.#sessions.endAll(Refusals.requestCut());
    await this.#modern.close();
    this.#closed = true;
    ctx.live.stopKeepalive();
    ctx.closeStore();
    return { sessions, cutRequests, drained: cutRequests === 0 };
  }

  #inflightCount(): number {
    return this.#sessions.inflightCount() + this.#modern.inflight;
  }
}
