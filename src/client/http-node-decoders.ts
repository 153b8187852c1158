/**
 * Response bodies of the Node adapter: `Content-Encoding` decoding (gzip, deflate, br) with zlib, flushed as
 * data arrives.
 */
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, constants as zlib } from 'node:zlib';

/** zlib decoders for a `Content-Encoding` value, applied in reverse order; none when a coding is unknown. */
export function decodersFor(coding: string): Transform[] {
  const codings = coding.toLowerCase().split(',');
  const out: Transform[] = [];
  // Like undici: flush as data arrives (SSE must not wait for a full window), and tolerate a missing trailer.
  const flush = { flush: zlib.Z_SYNC_FLUSH, finishFlush: zlib.Z_SYNC_FLUSH };
  for (let i = codings.length - 1; i >= 0; i--) {
    const c = (codings[i] as string).trim();
    if (c === 'gzip' || c === 'x-gzip') out.push(createGunzip(flush));
    else if (c === 'deflate') out.push(createInflate(flush));
    else if (c === 'br')
      out.push(
        createBrotliDecompress({
          flush: zlib.BROTLI_OPERATION_FLUSH,
          finishFlush: zlib.BROTLI_OPERATION_FLUSH,
        }),
      );
    else if (c === 'identity' || c === '') continue;
    else return [];
  }
  return out;
}
