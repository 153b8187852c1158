/**
 * A value attached to an object under a symbol of this module, for an object that lives about as
 * long as one request (its header object, a per-request closure). Not a WeakMap: on Node 20's V8
 * a scavenge treats the values of a WeakMap that is itself old (a module-level table always is)
 * as roots while their keys are young, so each request's value, and everything it reaches (the
 * request, its response, its sink), was promoted to the old generation and kept until the next
 * full collection — 0.5 ms scavenges became 8-10 ms, a quarter of a request's CPU (measured with
 * --trace-gc; docs/benchmarks.md, "GC: what each request promoted"). A property lives and dies
 * with its object, like any other field.
 *
 * The slot is non-enumerable (not copied by a spread, not listed by Object.keys or JSON), and
 * the symbol is not exported: code holding the object can still find it with
 * Object.getOwnPropertySymbols, so it is a place to keep a value, not a secret. An object that
 * cannot take a property (frozen, sealed, a proxy that refuses) gets a WeakMap entry instead.
 */
export class PrivateSlot<T> {
  readonly #key: symbol;
  readonly #fallback = new WeakMap<object, T>();
  /** Whether any object took the fallback: until then a miss costs no WeakMap lookup. */
  #fellBack = false;

  constructor(description: string) {
    this.#key = Symbol(description);
  }

  /** One descriptor for every `set` (defineProperty reads it before it returns): no object per call. */
  readonly #descriptor: PropertyDescriptor = {
    value: undefined,
    writable: true,
    enumerable: false,
    configurable: true,
  };

  set(o: object, value: T): void {
    if (Object.isExtensible(o)) {
      const d = this.#descriptor;
      d.value = value;
      const took = Reflect.defineProperty(o, this.#key, d);
      d.value = undefined;
      if (took) return;
    }
    this.#fellBack = true;
    this.#fallback.set(o, value);
  }

  get(o: object): T | undefined {
    const own = (o as Record<symbol, T | undefined>)[this.#key];
    return own !== undefined || !this.#fellBack ? own : this.#fallback.get(o);
  }
}
