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

/**
 * `frames` (`chars` UTF-16 code units in all) as one buffer of their UTF-8 bytes, each frame encoded
 * into it in turn: the same bytes as `Buffer.from(frames.join(''))`. A tick's batch of SSE frames
 * joined into one string is a tree of some 3,000 pieces (each frame is a few); measured inside a
 * server during a progress flood, flattening one of 64 KiB took about 150 µs and `Buffer.from` of
 * it 150–210 µs more, where writing a flat frame into a buffer is a copy (docs/benchmarks.md, "Frames
 * encoded one by one").
 *
 * The buffer starts at `chars` bytes, exact when every frame is ASCII (the usual case: JSON text,
 * ids and field names). A frame is written without a count while three bytes per code unit fit
 * (UTF-8 never needs more); otherwise its exact length is counted, and the buffer grows when it
 * would not fit, so a frame is never cut. The result is `Buffer.from(frames.join(''))` byte for byte,
 * lone surrogates included (each is U+FFFD either way).
 */
export function encodeFrames(frames: readonly string[], chars: number): Buffer {
  let buf = Buffer.allocUnsafeSlow(chars);
  let off = 0;
  let left = chars;
  for (const f of frames) {
    // A surrogate pair cut between two frames is one character joined and two U+FFFD apart. SSE
    // frames end in a line feed, so this never happens here; should it, the batch is joined.
    const last = f.charCodeAt(f.length - 1);
    if (last >= 0xd800 && last <= 0xdbff && left > f.length) return Buffer.from(frames.join(''), 'utf8');
    left -= f.length;
    if (off + 3 * f.length > buf.length) {
      const need = Buffer.byteLength(f, 'utf8');
      if (off + need > buf.length) {
        // Room for this frame and, at three bytes a code unit, every one after it: one growth at most.
        const grown = Buffer.allocUnsafeSlow(off + need + 3 * Math.max(0, left));
        buf.copy(grown, 0, 0, off);
        buf = grown;
      }
    }
    off += buf.write(f, off, 'utf8');
  }
  return off === buf.length ? buf : buf.subarray(0, off);
}
