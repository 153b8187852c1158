/**
 * ResponseSink over node:http2's compatibility response (an HTTP/2 stream). Unlike NodeSink it
 * leaves the socket alone — the socket is the whole connection's, shared by every stream, and
 * node forbids touching it (ERR_HTTP2_NO_SOCKET_MANIPULATION). Backpressure is the stream's own:
 * write() reports false when the stream's buffer is full, which is where bytes wait once the
 * peer's flow-control window for this stream is spent (RFC 9113 §5.2: per-stream credit), so one
 * paused reader blocks its own stream and no other.
 */
import type { Http2ServerResponse } from 'node:http2';
import type { Headers } from '../core/pipeline/sink.js';
import { NodeSinkBase } from './node-sink-base.js';
import { encodeFrames, wireChunk } from './wire-chunk.js';

export class H2Sink extends NodeSinkBase<Http2ServerResponse> {
  /**
   * HTTP/2 has no Connection header (RFC 9113 §8.2.2: connection-specific fields are malformed), and
   * node:http2 drops one with a process-wide UnsupportedWarning. Only the 413 refusal carries it (to
   * close an HTTP/1.1 connection whose body is still arriving); here the stream is closed by its end.
   */
  override respond(status: number, headers: Headers, body: string): void {
    if (headers['connection'] === undefined) super.respond(status, headers, body);
    else {
      const { connection: _, ...rest } = headers;
      super.respond(status, rest, body);
    }
  }

  get closed(): boolean {
    return this.peerClosed || this.res.stream.destroyed;
  }

  head(status: number, headers: Headers): void {
    if (this.closed || this.res.headersSent) return;
    this.res.writeHead(status, headers);
  }

  write(chunk: string): boolean {
    if (this.closed) return true;
    return this.res.write(wireChunk(chunk));
  }

  writeMany(frames: readonly string[], chars: number): boolean {
    if (this.closed) return true;
    return this.res.write(encodeFrames(frames, chars));
  }

  end(last?: string): void {
    if (this.res.writableEnded || this.closed) return;
    if (last === undefined || last.length === 0) this.res.end();
    else this.res.end(wireChunk(last));
  }

  destroy(): void {
    // RST_STREAM for this stream only; the connection and its other streams go on.
    this.res.stream.close(0x8 /* CANCEL */);
  }
}
