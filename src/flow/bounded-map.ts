/**
 * A map bounded in count whose oldest entry leaves first, in O(1): the caches and remembered-id
 * sets of Sluice (tokens, schemas, sessions, directory routes) that a flood of distinct keys drives
 * to their bound, where every insert also evicts.
 *
 * Why not a plain Map evicting `map.keys().next()`: V8 keeps a deleted Map/Set entry as a hole in
 * its ordered table until the next rehash, and iterating from the front walks every hole. A cache
 * at its bound that evicts its first key, and renews entries by `delete` + `set`, leaves a hole per
 * eviction or renewal, so each eviction costs O(holes), which grows with the size. Measured (Node
 * 20, a new key per step at the bound, time per step): evicting only, 0.33 / 4.7 / 31 µs at 1,000 /
 * 10,000 / 100,000 entries with the Map, 0.27 / 0.26 / 0.9 µs here; with a renewal per step as
 * well, 0.42 / 3.6 / 17 µs against 0.23 / 0.6 / 1.2 µs (what remains is cache misses of a large
 * table, not a walk).
 *
 * Here the Map only finds a key's node; order is an intrusive doubly linked list through the nodes,
 * oldest at #head. Renewing a key unlinks and relinks its node (no Map mutation), evicting the
 * oldest unlinks #head: no operation iterates the Map.
 *
 * Order is insertion order; `renew` and `touch` move a key to the newest end (recency order, for a
 * least-recently-used cache). `set` on a key already held keeps its place, as `Map.set` does.
 */

import { InvalidOptionError } from '../errors.js';

interface Node<K, V> {
  readonly key: K;
  value: V;
  /** Towards the oldest end. */
  prev: Node<K, V> | undefined;
  /** Towards the newest end. */
  next: Node<K, V> | undefined;
}

export class BoundedMap<K, V> {
  readonly #max: number;
  readonly #onEvict: ((key: K, value: V) => void) | undefined;
  readonly #nodes = new Map<K, Node<K, V>>();
  /** The oldest entry. */
  #head: Node<K, V> | undefined;
  /** The newest entry. */
  #tail: Node<K, V> | undefined;

  /**
   * @param max entries held at most (a positive integer, or Infinity); beyond it the oldest leaves.
   * @param onEvict told of each entry that left to respect `max` (not of `delete` nor `dropOldestWhile`).
   */
  constructor(max: number, onEvict?: (key: K, value: V) => void) {
    if (!(max >= 1) || (!Number.isSafeInteger(max) && max !== Number.POSITIVE_INFINITY)) {
      throw new InvalidOptionError(`BoundedMap max must be a positive integer or Infinity, got ${max}`);
    }
    this.#max = max;
    this.#onEvict = onEvict;
  }

  get size(): number {
    return this.#nodes.size;
  }

  has(key: K): boolean {
    return this.#nodes.has(key);
  }

  /** The value of `key`, leaving its place as it is. */
  get(key: K): V | undefined {
    return this.#nodes.get(key)?.value;
  }

  /** The value of `key`, which becomes the newest entry (a cache hit in recency order). */
  touch(key: K): V | undefined {
    const n = this.#nodes.get(key);
    if (n === undefined) return undefined;
    this.#moveToTail(n);
    return n.value;
  }

  /** As `Map.set`: a key already held keeps its place; a new key is the newest. Then evicts beyond max. */
  set(key: K, value: V): void {
    const n = this.#nodes.get(key);
    if (n !== undefined) {
      n.value = value;
      return;
    }
    this.#insert(key, value);
  }

  /** As `delete` then `set`: `key` becomes the newest entry, held before or not. Then evicts beyond max. */
  renew(key: K, value: V): void {
    const n = this.#nodes.get(key);
    if (n === undefined) {
      this.#insert(key, value);
      return;
    }
    n.value = value;
    this.#moveToTail(n);
  }

  delete(key: K): boolean {
    const n = this.#nodes.get(key);
    if (n === undefined) return false;
    this.#nodes.delete(key);
    this.#unlink(n);
    return true;
  }

  /** The oldest key (undefined when empty). */
  oldestKey(): K | undefined {
    return this.#head?.key;
  }

  /** The keys, oldest first. Deleting the key just given is safe; other changes meanwhile are not. */
  *keys(): IterableIterator<K> {
    for (let n = this.#head; n !== undefined; ) {
      const next = n.next;
      yield n.key;
      n = next;
    }
  }

  clear(): void {
    this.#nodes.clear();
    this.#head = undefined;
    this.#tail = undefined;
  }

  /**
   * Removes entries from the oldest end while `drop` says so (an expiry sweep when age order is
   * insertion order); stops at the first entry it keeps. `onEvict` is not called.
   */
  dropOldestWhile(drop: (value: V, key: K) => boolean): void {
    for (let n = this.#head; n !== undefined && drop(n.value, n.key); n = this.#head) {
      this.#nodes.delete(n.key);
      this.#unlink(n);
    }
  }

  #insert(key: K, value: V): void {
    const n: Node<K, V> = { key, value, prev: this.#tail, next: undefined };
    if (this.#tail === undefined) this.#head = n;
    else this.#tail.next = n;
    this.#tail = n;
    this.#nodes.set(key, n);
    if (this.#nodes.size > this.#max) {
      const oldest = this.#head as Node<K, V>;
      this.#nodes.delete(oldest.key);
      this.#unlink(oldest);
      this.#onEvict?.(oldest.key, oldest.value);
    }
  }

  #moveToTail(n: Node<K, V>): void {
    if (n === this.#tail) return;
    this.#unlink(n);
    n.prev = this.#tail;
    (this.#tail as Node<K, V>).next = n;
    this.#tail = n;
  }

  #unlink(n: Node<K, V>): void {
    if (n.prev === undefined) this.#head = n.next;
    else n.prev.next = n.next;
    if (n.next === undefined) this.#tail = n.prev;
    else n.next.prev = n.prev;
    // A node let go points nowhere: one already promoted to the old generation would otherwise
    // keep its young neighbours alive through every scavenge until a full collection.
    n.prev = undefined;
    n.next = undefined;
  }
}
