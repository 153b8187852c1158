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
 * The field is a class's private field (ES2022 §7.3.31 PrivateFieldAdd) put on an object the class
 * did not make: a base class whose constructor returns its argument makes the subclass's `super()`
 * bind `this` to that object, and the subclass's constructor adds the field to it. Unlike a
 * symbol-keyed property it is invisible to everything outside this module (not enumerable, not
 * copied by a spread, not shown by util.inspect, not listed by getOwnPropertySymbols), it can be
 * added to a frozen object or a proxy (private fields bypass [[DefineOwnProperty]]), and it takes
 * V8's inline caches like any field: about 30 ns a set where `Reflect.defineProperty` with a
 * symbol took about 270 ns (two sets per request; docs/benchmarks.md, "The SDK's request path").
 */

/** The base whose constructor returns the object given to it (ES2022 §10.2.1.3 [[Construct]] step 10). */
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

    static set(o: object, value: T): void {
      if (#value in o) (o as Field).#value = value;
      else new Field(o, value);
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

  constructor(description: string) {
    this.description = description;
  }

  set(o: object, value: T): void {
    this.#field.set(o, value);
  }

  get(o: object): T | undefined {
    return this.#field.get(o);
  }
}
