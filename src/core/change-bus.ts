/**
 * Change events for `subscriptions/listen` streams (MCP 2026-07-28 basic/patterns/subscriptions):
 * list changes and resource updates, published by the application (`handler.notify.*`) or captured
 * from what served servers emit. The bus is per endpoint; `ChangeBus` is the seam for a
 * multi-process backend (every instance behind a round-robin balancer must hear every change): with
 * a Redis cluster configured the endpoint uses the cluster's bus (src/cluster/change-bus.ts).
 */

export type ChangeEvent =
  | { kind: 'tools' }
  | { kind: 'prompts' }
  | { kind: 'resources' }
  | { kind: 'resource'; uri: string };

export interface ChangeBus {
  publish(event: ChangeEvent): void;
  /** Returns the unsubscribe function. */
  subscribe(listener: (event: ChangeEvent) => void): () => void;
}

/** In-process delivery, synchronous and in order. */
export class LocalChangeBus implements ChangeBus {
  readonly #listeners = new Set<(event: ChangeEvent) => void>();

  publish(event: ChangeEvent): void {
    for (const l of [...this.#listeners]) l(event);
  }

  subscribe(listener: (event: ChangeEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  get size(): number {
    return this.#listeners.size;
  }
}

/** The publish API on the handler (`handler.notify`). */
export interface Notifier {
  toolsListChanged(): void;
  promptsListChanged(): void;
  resourcesListChanged(): void;
  resourceUpdated(uri: string): void;
}

export function notifierFor(bus: ChangeBus): Notifier {
  return {
    toolsListChanged: () => bus.publish({ kind: 'tools' }),
    promptsListChanged: () => bus.publish({ kind: 'prompts' }),
    resourcesListChanged: () => bus.publish({ kind: 'resources' }),
    resourceUpdated: (uri) => {
      if (typeof uri !== 'string' || uri.length === 0) throw new TypeError('resourceUpdated needs a URI');
      bus.publish({ kind: 'resource', uri });
    },
  };
}

/** The change a server-emitted notification announces, if any. */
export function changeOf(
  method: string,
  params: Record<string, unknown> | undefined,
): ChangeEvent | undefined {
  switch (method) {
    case 'notifications/tools/list_changed':
      return { kind: 'tools' };
    case 'notifications/prompts/list_changed':
      return { kind: 'prompts' };
    case 'notifications/resources/list_changed':
      return { kind: 'resources' };
    case 'notifications/resources/updated': {
      const uri = params?.['uri'];
      return typeof uri === 'string' ? { kind: 'resource', uri } : undefined;
    }
    default:
      return undefined;
  }
}
