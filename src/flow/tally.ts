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
