/**
 * Where a POST body comes from when a framework sits in front of the handler. Frameworks with JSON
 * body parsing on (Express's `express.json()`, Fastify, Hono's `c.req.json()`) read the request
 * stream before the handler runs; reading it again would wait forever for bytes already consumed.
 * In order: a parsed body passed as the handler's third argument (as the official SDK's
 * `handleRequest(req, res, parsedBody)` takes it); else `req.body` when a framework set one; else
 * the stream, unless it has already ended, which is a configuration error to fail loudly on.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';

export type FrameworkBody =
  | { kind: 'text'; text: string; bytes: number }
  | { kind: 'invalid-utf8' }
  | { kind: 'consumed' }
  | { kind: 'stream' };

function fromValue(v: unknown): FrameworkBody {
  if (typeof v === 'string') return { kind: 'text', text: v, bytes: Buffer.byteLength(v) };
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) {
    const buf = Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    if (!isUtf8(buf)) return { kind: 'invalid-utf8' };
    return { kind: 'text', text: buf.toString('utf8'), bytes: buf.length };
  }
  // Already parsed JSON: serialised back so it passes the same classifier and limits as raw bytes.
  const text = JSON.stringify(v) ?? 'null';
  return { kind: 'text', text, bytes: Buffer.byteLength(text) };
}

export function frameworkBody(req: IncomingMessage, parsedBody: unknown): FrameworkBody {
  // A function is Express/Connect's `next` (app.all('/mcp', handler)), not a body.
  if (parsedBody !== undefined && typeof parsedBody !== 'function') return fromValue(parsedBody);
  const own = (req as { body?: unknown }).body;
  // Express leaves req.body undefined when no parser matched; an empty object from a parser that
  // skipped a non-JSON body is not a JSON-RPC message either way, and the classifier says so.
  if (own !== undefined && req.readableEnded) return fromValue(own);
  if (req.readableEnded) return { kind: 'consumed' };
  return { kind: 'stream' };
}
