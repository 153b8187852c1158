/**
 * Named running counts that only their owner advances: `add` and `get`, and `read` for a copy of
 * them all; no writable fields, so no code outside can set a count (only add to it through the
 * owner's object). The counts live in one object built once with every name, so each `add` is a
 * property update on a stable shape (as cheap as the `++` on a field it replaces).
 */
export class Tally<K extends string> {
  readonly #n: Record<K, number>;

  constructor(names: readonly K[]) {
    const n = {} as Record<K, number>;
    for (const name of names) n[name] = 0;
    this.#n = n;
  }

  /** Adds `by` (1 unless said) to one count. */
  add(name: K, by = 1): void {
    this.#n[name] += by;
  }

  get(name: K): number {
    return this.#n[name];
  }

  /** A copy of every count (the caller may keep or change it). */
  read(): Record<K, number> {
    return { ...this.#n };
  }
}

/**
 * Running counts by names that arrive at run time (a credential check's refusal reasons), at most
 * `maxNames` of them: later new names count under `other`, so a check that makes up reasons cannot
 * grow the map or a metric's label set without bound.
 */
export class OpenTally {
  readonly #n = new Map<string, number>();
  readonly #max: number;

  constructor(maxNames: number) {
    this.#max = maxNames;
  }

  add(name: string): void {
    const n = this.#n.get(name);
    if (n !== undefined) this.#n.set(name, n + 1);
    else if (this.#n.size < this.#max) this.#n.set(name, 1);
    else this.#n.set('other', (this.#n.get('other') ?? 0) + 1);
  }

  /** A copy of every count, by name. */
  read(): Record<string, number> {
    return Object.fromEntries(this.#n);
  }
}
