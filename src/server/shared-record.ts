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

import { AlreadyRegisteredError } from '../errors.js';

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

/** `server` as the object holding the tables (plain objects) and methods named, or undefined if one is missing. */
export function internalsOf(
  server: object,
  tables: readonly string[],
  methods: readonly string[],
): Record<string, unknown> | undefined {
  const t = server as Record<string, unknown>;
  for (const k of tables) if (typeof t[k] !== 'object' || t[k] === null) return undefined;
  for (const k of methods) if (typeof t[k] !== 'function') return undefined;
  return t;
}

/** How one kind of shared item (prompts; resources and templates) goes into an SDK McpServer. */
export interface Placement<T extends object> {
  /** The SDK tables the kind's records go in (`_registeredPrompts`, …). */
  readonly tables: readonly string[];
  /** The SDK methods that install the kind's list handlers, and announce a change. */
  readonly handlers: string;
  readonly listChanged: string;
  /** The SDK's own call: on the probe, and for every server when no shared record fits. */
  register(server: object, item: T): unknown;
  records(item: T): SharedRecords<T>;
  /** Where the item's record goes: its table, its key, and how the SDK names it when refusing a duplicate. */
  slot(item: T): readonly [table: string, key: string, label: 'Prompt' | 'Resource' | 'Resource template'];
}

/** Puts each item's learnt record into `server`'s table (or makes the SDK's call), then announces them. */
export function installShared<T extends object>(server: object, items: readonly T[], p: Placement<T>): void {
  const t = internalsOf(server, p.tables, [p.handlers, p.listChanged, 'setCompletionRequestHandler']);
  const proto = Object.getPrototypeOf(server) as object | null;
  let installed = false;
  let completion = false;
  for (const item of items) {
    const learnt =
      t === undefined || proto === null
        ? null
        : p.records(item).learn(proto, item, (probe) => p.register(probe, item));
    if (t === undefined || learnt === null) {
      p.register(server, item);
      continue;
    }
    const [table, key, label] = p.slot(item);
    const slots = t[table] as Record<string, unknown>;
    // As the SDK's own call: a key is registered once per server.
    if (slots[key] !== undefined) throw new AlreadyRegisteredError(label, key);
    slots[key] = learnt.record;
    completion ||= learnt.completion;
    installed = true;
  }
  if (t === undefined || !installed) return;
  (t[p.handlers] as () => void).call(t);
  // As registerPrompt/registerResource do for a completable argument or a template's completer.
  if (completion) (t['setCompletionRequestHandler'] as () => void).call(t);
  (t[p.listChanged] as () => void).call(t);
}
