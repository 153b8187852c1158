/**
 * Reads a POST body with a byte limit, checked against Content-Length before reading and against
 * the bytes as they arrive (a chunked body has no length). Invalid UTF-8 is refused: "JSON-RPC
 * messages MUST be UTF-8 encoded" (basic/transports), and silently replacing bad bytes would let a
 * malformed id through as some other string.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { BodyResult } from '../core/pipeline/request-view.js';

export type { BodyResult };

/**
 * `beforeRead`: called once the declared length passed, just before reading (serve() sends the
 * `100 Continue` a client's `Expect` asked for there; see node-view.ts).
 */
export function readBody(req: IncomingMessage, limit: number, beforeRead?: () => void): Promise<BodyResult> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    return Promise.resolve({ ok: false, reason: 'too-large' });
  }
  beforeRead?.();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let done = false;
    const finish = (r: BodyResult): void => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onClose);
      resolve(r);
    };
    const onData = (c: Buffer): void => {
      total += c.length;
      if (total > limit) {
        finish({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(c);
    };
    const onEnd = (): void => {
      const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
      if (!isUtf8(buf)) finish({ ok: false, reason: 'invalid-utf8' });
      else finish({ ok: true, text: buf.toString('utf8') });
    };
    const onAbort = (): void => finish({ ok: false, reason: 'aborted' });
    const onClose = (): void => {
      if (!req.complete) onAbort();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}
