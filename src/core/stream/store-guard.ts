/**
 * Connects the guarded event store to the endpoint's counters and logger. A failing store is logged
 * at most once a second per operation (a Redis outage would otherwise log once per event), with the
 * number of failures folded into that line.
 */

import type { EventStore } from '../../events/event-store.js';
import { GuardedEventStore, type StoreOperation } from '../../events/guarded-event-store.js';
import type { Counters } from '../observe/counters.js';
import type { Logger } from '../options.js';

const LOG_EVERY_MS = 1_000;

export function guardStore(
  store: EventStore,
  counters: Counters,
  logger: Logger | undefined,
): GuardedEventStore {
  const lastLogged: Record<StoreOperation, number> = { append: 0, replay: 0, endStream: 0, dropSession: 0 };
  const unlogged: Record<StoreOperation, number> = { append: 0, replay: 0, endStream: 0, dropSession: 0 };
  return new GuardedEventStore(store, {
    storeError(op, error) {
      counters.storeErrors.add(op);
      unlogged[op]++;
      const now = Date.now();
      if (logger === undefined || now - lastLogged[op] < LOG_EVERY_MS) return;
      lastLogged[op] = now;
      logger.warn('event_store.error', { op, failures: unlogged[op], error: String(error) });
      unlogged[op] = 0;
    },
    storeGap() {
      counters.add('storeGaps');
    },
  });
}
