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
  /** Starts a streamed response, sending headers and the first bytes together. False = buffer full. */
  open(status: number, headers: Headers, first: string): boolean;
  /** Writes more of the stream. False = the socket is not writable; wait for onDrain. */
  write(chunk: string): boolean;
  /** Finishes the response (flushing what was written). */
  end(): void;
  /** Drops the connection at once, e.g. after a queue overflow. */
  destroy(): void;
  onDrain(listener: () => void): void;
  /** Called once when the connection is gone (finished, reset or destroyed). */
  onClose(listener: () => void): void;
  readonly closed: boolean;
}
