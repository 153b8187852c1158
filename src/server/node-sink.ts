/**
 * ResponseSink over node:http's ServerResponse, written straight to the socket: no Web
 * Request/Response round trip and no ReadableStream queue (docs/benchmarks.md "Baseline": that layer
 * costs the SDK ~11 % CPU and hides backpressure). Headers go out with the first bytes in one write.
 */
import type { ServerResponse } from 'node:http';
import type { Headers } from '../core/pipeline/sink.js';
import { flat } from '../flow/flat.js';
import { NodeSinkBase } from './node-sink-base.js';
import { encodeFrames, wireChunk } from './wire-chunk.js';

/**
 * node:http builds a response's header block by concatenation (status line, each header, Date,
 * Connection, Keep-Alive, Transfer-Encoding: about 18 joined pieces and their parts) and keeps it as
 * `_header` for the response's life. A streamed response (an SSE stream may stay open for hours)
 * would hold that tree, about 0.6 KiB; flat, about 0.2 KiB (flow/flat.ts; docs/benchmarks.md, idle
 * memory). Only read, never written: where a Node version keeps no such string this does nothing.
 */
function flattenHeaderBlock(res: ServerResponse): void {
  const block = (res as unknown as { _header?: unknown })._header;
  if (typeof block === 'string') flat(block);
}

export class NodeSink extends NodeSinkBase<ServerResponse> {
  get closed(): boolean {
    return this.peerClosed || this.res.destroyed;
  }

  head(status: number, headers: Headers): void {
    if (this.closed || this.res.headersSent) return;
    this.res.socket?.setNoDelay(true);
    this.res.writeHead(status, headers);
    flattenHeaderBlock(this.res);
  }

  write(chunk: string): boolean {
    if (this.closed) return true;
    return this.#sent(this.res.write(wireChunk(chunk)));
  }

  writeMany(frames: readonly string[], chars: number): boolean {
    if (this.closed) return true;
    return this.#sent(this.res.write(encodeFrames(frames, chars)));
  }

  /** After a write: the response uncorked, and whether the socket takes more. */
  #sent(ok: boolean): boolean {
    const res = this.res;
    // A response's first write in a tick corks it until process.nextTick; a producer that only awaits
    // resolved promises never lets nextTick run, so every event would wait for the end of its loop
    // (docs/benchmarks.md "Baseline": 13 s to the first event). Uncork now: the writer has batched.
    // Node 20 and 22 cork the socket, and the response's uncork() uncorks it. Node 24 corks the
    // response itself and keeps chunked writes in it (`writableCorked` counts those corks only); its
    // uncork() sends them and uncorks the socket, and must not run without a cork to undo (its
    // count would go below zero and hold every later write). A socket corked by someone else (Node 24
    // then writes to it directly) is uncorked as before.
    const socket = res.socket;
    if (res.writableCorked > 0) res.uncork();
    else if (socket !== null && socket.writableCorked > 0) socket.uncork();
    // write() measured the buffer while corked; after the uncork the kernel may have taken it all.
    return ok || res.writableLength < res.writableHighWaterMark;
  }

  end(last?: string): void {
    if (this.res.writableEnded) return;
    if (last === undefined || last.length === 0) this.res.end();
    else this.res.end(wireChunk(last));
  }

  destroy(): void {
    this.res.destroy();
  }
}
