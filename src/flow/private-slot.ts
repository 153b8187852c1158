/**
 * A value attached to an object, for an object that lives about as long as one request (its
 * header object, a per-request closure). Not a WeakMap: on Node 20's V8 a scavenge treats the
 * values of a WeakMap that is itself old (a module-level table always is) as roots while their
 * keys are young, so each request's value, and everything it reaches (the request, its response,
 * its sink), was promoted to the old generation and kept until the next full collection — 0.5 ms
 * scavenges became 8-10 ms, a quarter of a request's CPU (measured with --trace-gc;
 * docs/benchmarks.md, "GC: what each request promoted"). A field lives and dies with its object,
 * like any other.
 *
 * The field is a class's private field (ECMA-262 PrivateFieldAdd) put on an object the class did
 * not make: a base class whose constructor returns its argument makes the subclass's `super()` bind
 * `this` to that object ([[Construct]]: an object a constructor returns is the result), and the
 * subclass's constructor adds the field to it. Unlike a symbol-keyed property it is invisible to
 * everything outside this module (not enumerable, not copied by a spread, not shown by
 * util.inspect, not listed by getOwnPropertySymbols), and it takes V8's inline caches like any
 * field: about 30 ns a set where `Reflect.defineProperty` with a symbol took about 270 ns (two sets
 * per request; docs/benchmarks.md, "The SDK's request path"). An object that is not extensible
 * (frozen, sealed) gets a WeakMap entry instead: today's engines add private fields to it anyway,
 * but the TC39 proposal "Non-extensible Applies to Private" makes that throw (a throw here falls
 * back the same way).
 */

/** The base whose constructor returns the object given to it (see the module note). */
class Adopt {
  constructor(o: object) {
    // biome-ignore lint/correctness/noConstructorReturn: returning `o` is how the field reaches it
    return o;
  }
}

/** A fresh class per slot: each evaluation of a class body makes a private name of its own. */
function fieldClass<T>() {
  return class Field extends Adopt {
    #value: T;

    constructor(o: object, value: T) {
      super(o);
      this.#value = value;
    }

    /** False when `o` cannot take the field (see the module note); nothing is set then. */
    static set(o: object, value: T): boolean {
      if (#value in o) {
        (o as Field).#value = value;
        return true;
      }
      if (!Object.isExtensible(o)) return false;
      try {
        new Field(o, value);
        return true;
      } catch {
        return false;
      }
    }

    static get(o: object): T | undefined {
      return #value in o ? (o as Field).#value : undefined;
    }
  };
}

export class PrivateSlot<T> {
  /** What the slot holds, for a reader in a debugger: the field itself has no name to show. */
  readonly description: string;
  readonly #field = fieldClass<T>();
  readonly #fallback = new WeakMap<object, T>();
  /** Whether any object took the fallback: until then a miss costs no WeakMap lookup. */
  #fellBack = false;

  constructor(description: string) {
    this.description = description;
  }

  set(o: object, value: T): void {
    if (this.#field.set(o, value)) return;
    this.#fellBack = true;
    this.#fallback.set(o, value);
  }

  get(o: object): T | undefined {
    const own = this.#field.get(o);
    return own !== undefined || !this.#fellBack ? own : this.#fallback.get(o);
  }
}
