/**
 * What both eras share, built once per endpoint and handed to each of them instead of the
 * endpoint itself: the resolved options and `createServer`, the counters, the event store (the
 * built-in one, or the application's behind a guard, teed to a cluster's copy), the writer limits
 * and the pacer, the live set of open SSE connections (for the shared keepalive timer and the
 * queue stats), the change bus, the cluster hooks, and whether a graceful close has begun.
 * Nothing here is per session or per request.
 */
import type { EventStore } from '../events/event-store.js';
import { type EventStoreStats, MemoryEventStore } from '../events/memory-event-store.js';
import { TeeEventStore } from '../events/tee-event-store.js';
import type { ConnectionShared } from './answer/connection.js';
import { type ChangeBus, LocalChangeBus } from './change-bus.js';
import type { ClusterHooks } from './cluster-hooks.js';
import { Counters } from './observe/counters.js';
import { Operations } from './observe/operations.js';
import type { ResolvedOptions } from './options.js';
import type { CreateServer } from './sdk/server-like.js';
import { LiveSet } from './stream/live.js';
import { Pacer } from './stream/pacer.js';
import type { WriterLimits } from './stream/sse-writer.js';
import { guardStore } from './stream/store-guard.js';

export class CoreContext {
  readonly options: ResolvedOptions;
  readonly createServer: CreateServer;
  readonly counters: Counters;
  readonly store: EventStore;
  /** Every attached SSE writer, for the shared keepalive timer and the queue stats. */
  readonly live = new LiveSet();
  readonly limits: WriterLimits;
  /** What every SSE connection of this endpoint shares (answer/connection.ts). */
  readonly connections: ConnectionShared;
  readonly pacer: Pacer;
  /** List changes and resource updates, from served servers, handler.notify or other instances. */
  readonly bus: ChangeBus;
  /** Set when this instance is one of a cluster (src/cluster/). */
  readonly cluster: ClusterHooks | undefined;
  /** Spans and semantic-convention metrics per request; undefined when neither is on. */
  readonly operations: Operations | undefined;
  readonly #ownStore: MemoryEventStore | undefined;
  #closing = false;

  constructor(createServer: CreateServer, options: ResolvedOptions, cluster: ClusterHooks | undefined) {
    this.options = options;
    this.createServer = createServer;
    this.cluster = cluster;
    this.bus = cluster?.changeBus ?? new LocalChangeBus();
    this.counters = new Counters(options.metrics);
    this.operations = Operations.create(
      options.tracing,
      this.counters.metrics?.semconv,
      () => this.#closing,
      options.now,
    );
    let store: EventStore;
    if (options.eventStore === undefined) {
      this.#ownStore = new MemoryEventStore({
        limits: options.replay,
        ...options.replayBudget,
        now: options.now,
      });
      store = this.#ownStore;
    } else {
      // An application-supplied store may be networked: it may throw, reject or be slow.
      store = guardStore(options.eventStore, this.counters, options.logger);
    }
    this.store = cluster === undefined ? store : new TeeEventStore(store, cluster);
    this.limits = { highWaterMark: options.highWaterMark, maxQueueBytes: options.maxQueueBytes };
    this.pacer = new Pacer(options.pacingMs);
    this.connections = {
      counters: this.counters,
      limits: this.limits,
      now: options.now,
      live: this.live,
    };
  }

  /** A graceful close has begun: no session or request may start. */
  get closing(): boolean {
    return this.#closing;
  }

  beginClose(): void {
    this.#closing = true;
  }

  /** The built-in replay buffer's stats; null with an application-supplied store. */
  storeStats(): EventStoreStats | null {
    return this.#ownStore?.stats() ?? null;
  }

  /** Frees the built-in store (endpoint close). */
  closeStore(): void {
    this.#ownStore?.close();
  }
}
