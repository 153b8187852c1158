/**
 * Makes V8 keep `s` as one flat string and returns it. A string built by concatenation (an SSE
 * frame: id, JSON text, line ends; node:http's header block) is a tree of pieces until something
 * reads a character of it, which flattens it in place. One kept for long (a frame in the replay
 * store for as long as its stream may be resumed, a streamed response's header block for the
 * response's life) holds about half the heap flat, and one object instead of several for the
 * collector to copy and mark (docs/benchmarks.md, (b) and idle memory).
 */
export function flat(s: string): string {
  s.charCodeAt(0);
  return s;
}
