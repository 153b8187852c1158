/**
 * The 2026-07-28 era of one endpoint: its state (requests in flight, listen streams, the tools'
 * `x-mcp-header` cache, counters), the per-client concurrency limit (the era has no sessions to
 * bound a client by), and the shared servers when `createServer` is declared stateless-safe. What
 * a request, a listen stream or a shared server of this era needs, it reads from here and from the
 * core context, never from the endpoint.
 */
import type { CoreContext } from '../context.js';
import { ConcurrencyLimit } from '../limits/concurrency.js';
import type { ModernStats } from '../observe/stats.js';
import { isStatelessSafe, SharedServers } from './shared-server.js';
import { ModernState } from './state.js';

export class ModernEra {
  readonly core: CoreContext;
  readonly state: ModernState;
  /**
   * 2026-07-28 requests in flight per client (`clientLimits.maxConcurrentRequests`); undefined only
   * when clientLimits is false. That era is stateless whatever `stateless` says, so it applies there too.
   */
  readonly limit: ConcurrencyLimit | undefined;
  /** One served server per principal, when createServer is declared stateless-safe. */
  readonly shared: SharedServers | undefined;

  constructor(core: CoreContext) {
    this.core = core;
    this.state = new ModernState(core.bus);
    // A tool list change, from wherever it was published (a served server, handler.notify, another
    // instance of a cluster), makes the tools' x-mcp-header declarations stale.
    core.bus.subscribe((event) => {
      if (event.kind === 'tools') this.state.toolsChanged();
    });
    const limits = core.options.clientLimits;
    this.limit = limits === undefined ? undefined : new ConcurrencyLimit(limits.maxConcurrentRequests);
    this.shared = isStatelessSafe(core.createServer) ? new SharedServers(core) : undefined;
  }

  get inflight(): number {
    return this.state.inflightCount;
  }

  /** Listen streams never drain by themselves: a close ends them first, each with its listen result. */
  endListens(): void {
    for (const l of this.state.listensNow()) l.end();
  }

  /** Ends what is still running (close deadline), then closes the shared servers. */
  async close(): Promise<void> {
    for (const call of this.state.inflightNow()) call.abandon();
    await this.shared?.close();
  }

  stats(): ModernStats {
    const m = this.state;
    const n = m.counts.read();
    return {
      requests: n.requests,
      inflight: m.inflightCount,
      refusals: n.refusals,
      cancels: n.cancels,
      notifications: n.notifications,
      listenStreams: m.listenCount,
      listensOpened: n.listensOpened,
      listenRefusals: n.listenRefusals,
      listenCoalesced: n.listenCoalesced,
      concurrencyRefusals: this.limit?.refused ?? 0,
      slotsHeld: this.limit?.held ?? 0,
      clientsInflight: this.limit?.keys ?? 0,
    };
  }
}
