/**
 * What the protocol core needs from one HTTP exchange, with no HTTP library in sight. The node:http
 * binding (src/server/node-sink.ts) implements it on ServerResponse; a fetch binding could implement
 * it on a ReadableStream controller.
 */

export type Headers = Record<string, string>;

export interface RequestHead {
  method: string;
  /** Header lookup by lower-case name; repeated headers joined with ", ". */
  header(name: string): string | undefined;
}

export interface ResponseSink {
  /** A complete response in one write: status line, headers and body. */
  respond(status: number, headers: Headers, body: string): void;
  /**
   * Sets the status and headers of a streamed response without sending anything: they go out with
   * the first write (or the end), so a short stream costs one write in all.
   */
  head(status: number, headers: Headers): void;
  /** Writes more of the stream. False = the socket is not writable; wait for onDrain. */
  write(chunk: string): boolean;
  /**
   * Optional: writes `frames` (`chars` UTF-16 code units in all) as `write(frames.join(''))` would,
   * for a binding that can do it cheaper. The node bindings encode each frame into one buffer: a
   * 64 KiB batch joined into one string is a tree of some 3,000 pieces, and flattening it cost more
   * than encoding it (docs/benchmarks.md, "Frames encoded one by one").
   */
  writeMany?(frames: readonly string[], chars: number): boolean;
  /** Finishes the response, with `last` as its final bytes (headers, last bytes and end in one write). */
  end(last?: string): void;
  /** Drops the connection at once, e.g. after a queue overflow. */
  destroy(): void;
  onDrain(listener: () => void): void;
  /** Called once when the connection is gone (finished, reset or destroyed). */
  onClose(listener: () => void): void;
  readonly closed: boolean;
}
