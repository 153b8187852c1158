/**
 * What a node sink hands its socket: a long string as its UTF-8 bytes, a short one as it is.
 *
 * A string written to a node:http or node:http2 response is flattened by V8 (its byte length is
 * needed for the chunk header or the content-length) and held by the write request until the
 * kernel takes it. A batch of SSE frames (up to 64 KiB, core/stream/sse-writer.ts) often outlives a
 * scavenge that way: the kernel's buffer is full while the reader catches up, so V8 copies the flat
 * string into survivor space and then into the old generation, and the next full collection marks
 * it. Measured on a 100,000-event progress flood (docs/benchmarks.md, "Long strings to the socket
 * as bytes"): such batches were 15.2 MB of the 15.9 MB of objects allocated during the flood that a
 * minor collection did not free, and the collector's time halved once they went as Buffers, whose
 * bytes live outside the JS heap. The conversion is one encode, which the socket's write would
 * otherwise do itself; short strings (a single frame, a keepalive) keep the cheaper string path.
 */

/** Strings of at least this many UTF-16 code units go to the socket as bytes. */
export const WIRE_BYTES_MIN = 4096;

/** `chunk` as the socket should take it (see the module note). */
export function wireChunk(chunk: string): string | Buffer {
  return chunk.length >= WIRE_BYTES_MIN ? Buffer.from(chunk, 'utf8') : chunk;
}
