/**
 * One frozen registration record for every server: what `registerSharedTools`,
 * `registerSharedPrompts` and `registerSharedResources` put in each session's `McpServer` table.
 *
 * The SDK's `registerTool`/`registerPrompt`/`registerResource` make a record per server that holds
 * four closures over that server (`enable`, `disable`, `update`, `remove`). With a server per
 * request, V8 pretenures those records' allocation site, and each dead record in the old generation
 * keeps its server and all it reaches alive through every scavenge until a full collection
 * (docs/benchmarks.md, "A server per request: the SDK's tool record"). A shared record is the SDK's
 * record copied once, data fields only, with changers that throw: one record cannot change one
 * server's table. It is used only when the SDK's record has exactly the fields listed here;
 * otherwise the SDK's own call runs for every server.
 */

export class SharedRecords<T extends object> {
  /** Per McpServer class (two SDK copies can differ), per item: its record, or null when the SDK's did not fit. */
  readonly #byClass = new WeakMap<object, WeakMap<T, object | null>>();
  readonly #data: readonly string[];
  readonly #changers: readonly string[];
  readonly #fields: string;
  readonly #refuse: (item: T, operation: string) => Error;

  constructor(
    data: readonly string[],
    changers: readonly string[],
    refuse: (item: T, operation: string) => Error,
  ) {
    this.#data = data;
    this.#changers = changers;
    this.#fields = [...data, ...changers].sort().join();
    this.#refuse = refuse;
  }

  /** The items' records for one McpServer class (its prototype). */
  of(proto: object): WeakMap<T, object | null> {
    let known = this.#byClass.get(proto);
    if (known === undefined) {
      known = new WeakMap();
      this.#byClass.set(proto, known);
    }
    return known;
  }

  /**
   * Registers `item` on a throwaway server of the class `proto` belongs to (its own SDK copy), to
   * learn its record and whether it turned the completion handler on (a completable prompt argument,
   * a template variable with a completer: SDK 1.32 `_createRegisteredPrompt`/`…ResourceTemplate`).
   * Only the SDK's own `McpServer` is built bare (a subclass's constructor may do anything): null
   * for a subclass, when the class cannot be built that way, or when the record is not the known
   * shape.
   */
  learn(proto: object, item: T, register: (probe: object) => unknown): Learnt | null {
    const known = this.of(proto);
    const had = known.get(item);
    if (had !== undefined) return had === null ? null : (had as Learnt);
    let learnt: Learnt | null = null;
    const Ctor = (proto as { constructor?: unknown }).constructor;
    try {
      if (
        typeof Ctor !== 'function' ||
        Ctor.name !== 'McpServer' ||
        Object.getPrototypeOf(proto) !== Object.prototype
      )
        throw new Error('not the SDK McpServer');
      const probe = new (Ctor as new (info: object) => object)({ name: 'sluice-shared-probe', version: '0' });
      const record = this.copy(item, register(probe));
      if (record !== null) {
        const completion = (probe as { _completionHandlerInitialized?: unknown })
          ._completionHandlerInitialized;
        learnt = { record, completion: completion === true };
      }
    } catch {
      // A subclass, an SDK whose server cannot be built bare, or one that refused the item: the SDK's
      // own call, for every server.
    }
    known.set(item, learnt);
    return learnt;
  }

  /** A frozen copy of the SDK's record `made` for `item`, or null when its fields are not the known ones. */
  copy(item: T, made: unknown): object | null {
    if (typeof made !== 'object' || made === null || Object.keys(made).sort().join() !== this.#fields)
      return null;
    const from = made as Record<string, unknown>;
    const r: Record<string, unknown> = {};
    for (const k of this.#data) r[k] = from[k];
    for (const op of this.#changers) {
      r[op] = () => {
        throw this.#refuse(item, op);
      };
    }
    return Object.freeze(r);
  }
}

/** A shared record, and whether a server holding it needs the SDK's completion handler. */
export interface Learnt {
  readonly record: object;
  readonly completion: boolean;
}

/** The record's closures over its server, which a shared record replaces with throwing ones (SDK 1.32). */
export const CHANGERS = ['enable', 'disable', 'update', 'remove'] as const;
