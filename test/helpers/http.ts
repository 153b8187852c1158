/**
 * Raw HTTP for the server tests: node:http requests with exact headers (Host, Origin, anything),
 * replies whose status, headers and body can be asserted byte for byte (with the incremental SSE
 * view of arriving-body.ts), and raw sockets for what node:http would refuse to send. Every wait is
 * bounded with withDeadline.
 */
import {
  type Agent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { connect, type Socket } from 'node:net';
import { ArrivingBody, type Loose } from './arriving-body.js';
import { withDeadline } from './deadline.js';

export const LATEST = '2025-11-25';

export type { Loose } from './arriving-body.js';
export const ACCEPT_BOTH = 'application/json, text/event-stream';

export interface SendOptions {
  method?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Send the body in these pieces with chunked transfer encoding (no Content-Length). */
  chunks?: (string | Buffer)[];
  /** Deadline for the response head. @defaultValue 5000 */
  timeoutMs?: number;
  /** The client's local address (e.g. 127.0.0.2, to look like another host). */
  localAddress?: string;
  /** A keep-alive agent to send through. @defaultValue a connection of its own (`agent: false`) */
  agent?: Agent;
}

export function isEventStream(headers: IncomingHttpHeaders): boolean {
  return (headers['content-type'] ?? '').startsWith('text/event-stream');
}

/** One HTTP response as it arrives. */
export class Reply extends ArrivingBody {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly res: IncomingMessage;

  constructor(res: IncomingMessage) {
    super(res, () => isEventStream(res.headers));
    this.res = res;
    this.status = res.statusCode ?? 0;
    this.headers = res.headers;
  }

  get isSse(): boolean {
    return isEventStream(this.headers);
  }

  /** Drops the connection. */
  destroy(): void {
    this.res.destroy();
    this.res.socket?.destroy();
  }
}

/** Sends a request and resolves with the response once its head arrived (the body keeps coming). */
export function open(url: string, o: SendOptions = {}): Promise<Reply> {
  const p = new Promise<Reply>((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: o.method ?? 'GET',
        headers: o.headers ?? {},
        agent: o.agent ?? false,
        ...(o.localAddress === undefined ? {} : { localAddress: o.localAddress }),
      },
      (res) => resolve(new Reply(res)),
    );
    req.on('error', reject);
    if (o.chunks !== undefined) {
      const pieces = o.chunks;
      const next = (i: number): void => {
        if (i >= pieces.length) {
          req.end();
          return;
        }
        req.write(pieces[i] as string | Buffer, () => next(i + 1));
      };
      next(0);
    } else {
      req.end(o.body);
    }
  });
  return withDeadline(p, o.timeoutMs ?? 5_000, `${o.method ?? 'GET'} ${url} response head`);
}

/** Sends a request and waits for the whole response. */
export async function send(url: string, o: SendOptions = {}): Promise<Reply> {
  const r = await open(url, o);
  await r.finished(o.timeoutMs ?? 5_000, `${o.method ?? 'GET'} ${url} body`);
  return r;
}

let nextId = 1;
export function rpc(method: string, params?: Record<string, unknown>, id: string | number = nextId++): Loose {
  return params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
}
export function notification(method: string, params?: Record<string, unknown>): Loose {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}
export function toolCall(
  name: string,
  args: Record<string, unknown>,
  id: string | number = nextId++,
  progressToken?: string | number,
): Loose {
  const params: Record<string, unknown> = { name, arguments: args };
  if (progressToken !== undefined) params['_meta'] = { progressToken };
  return rpc('tools/call', params, id);
}

export function initializeBody(
  version = LATEST,
  capabilities: Record<string, unknown> = {},
  id: string | number = 0,
): Loose {
  return rpc(
    'initialize',
    { protocolVersion: version, capabilities, clientInfo: { name: 'raw-test', version: '1.0.0' } },
    id,
  );
}

/** A session driven with raw requests. */
export class RawSession {
  readonly url: string;
  sid: string | undefined;
  version: string | undefined;
  /** Headers added to every request (e.g. Authorization). */
  extra: Record<string, string>;

  constructor(url: string, extra: Record<string, string> = {}) {
    this.url = url;
    this.extra = extra;
  }

  headers(more: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = {
      'content-type': 'application/json',
      accept: ACCEPT_BOTH,
      ...this.extra,
    };
    if (this.sid !== undefined) h['mcp-session-id'] = this.sid;
    if (this.version !== undefined && this.version !== '2025-03-26') h['mcp-protocol-version'] = this.version;
    return { ...h, ...more };
  }

  /** initialize + notifications/initialized; throws unless the server created a session. */
  async init(version = LATEST, capabilities: Record<string, unknown> = {}): Promise<Reply> {
    const r = await send(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...this.extra },
      body: JSON.stringify(initializeBody(version, capabilities)),
    });
    if (r.status !== 200) throw new Error(`initialize: ${r.status} ${r.text}`);
    const sid = r.headers['mcp-session-id'];
    if (typeof sid !== 'string') throw new Error('initialize: no Mcp-Session-Id');
    this.sid = sid;
    this.version = r.json().result.protocolVersion;
    const n = await this.post(notification('notifications/initialized'));
    if (n.status !== 202) throw new Error(`initialized: ${n.status} ${n.text}`);
    return r;
  }

  /** POSTs a message (object or raw text) and waits for the whole answer. */
  post(body: unknown, more: Record<string, string> = {}, timeoutMs = 5_000): Promise<Reply> {
    return send(this.url, {
      method: 'POST',
      headers: this.headers(more),
      body: typeof body === 'string' ? body : JSON.stringify(body),
      timeoutMs,
    });
  }

  /** POSTs and returns at the response head (for SSE answers). */
  postOpen(body: unknown, more: Record<string, string> = {}): Promise<Reply> {
    return open(this.url, {
      method: 'POST',
      headers: this.headers(more),
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  /** Opens a GET (standalone stream, or a resumption with Last-Event-ID). */
  get(more: Record<string, string> = {}): Promise<Reply> {
    const h = this.headers({ accept: 'text/event-stream', ...more });
    delete h['content-type'];
    return open(this.url, { method: 'GET', headers: h });
  }

  delete(more: Record<string, string> = {}): Promise<Reply> {
    const h = this.headers(more);
    delete h['content-type'];
    return send(this.url, { method: 'DELETE', headers: h });
  }
}

/** Asserts-friendly view of a JSON-RPC error body: [code, data.reason]. */
export function errorOf(r: Reply): { code: number; reason: string | undefined; id: unknown } {
  const b = r.json();
  return { code: b.error?.code, reason: b.error?.data?.reason, id: b.id };
}

/**
 * Writes raw bytes on a fresh TCP connection and collects what comes back until the server closes
 * the connection or `ms` passes (then the socket is destroyed and what arrived is returned).
 */
export function rawExchange(port: number, bytes: string | Buffer, ms = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(out);
    }, ms);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      out += d;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      if (out.length > 0) resolve(out);
      else reject(e);
    });
    socket.write(bytes);
  });
}

/** The status code of a raw HTTP/1.1 response text, or 0. */
export function rawStatus(raw: string): number {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(raw);
  return m === null ? 0 : Number(m[1]);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls cond every `everyMs` until it holds, bounded by ms (polling stops at the deadline too). */
export function until(cond: () => boolean, ms: number, label: string, everyMs = 10): Promise<void> {
  let stop = false;
  return withDeadline(
    new Promise<void>((resolve) => {
      const tick = (): void => {
        if (stop) return;
        if (cond()) resolve();
        else setTimeout(tick, everyMs);
      };
      tick();
    }),
    ms,
    label,
  ).finally(() => {
    stop = true;
  });
}

/** A transport refusal: the status, a JSON body that is a JSON-RPC error without id, its code and data.reason. */
export function assertRefusal(r: Reply, status: number, code: number, reason: string): void {
  if (r.status !== status)
    throw new Error(`expected HTTP ${status}, got ${r.status}: ${r.text.slice(0, 500)}`);
  const ct = r.headers['content-type'] ?? '';
  if (!ct.startsWith('application/json')) throw new Error(`expected a JSON body, got content-type ${ct}`);
  const b = r.json();
  const got = { jsonrpc: b.jsonrpc, id: b.id, code: b.error?.code, reason: b.error?.data?.reason };
  const want = { jsonrpc: '2.0', id: null, code, reason };
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    throw new Error(`refusal body mismatch: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
  if (typeof b.error?.message !== 'string' || b.error.message.length === 0)
    throw new Error('refusal without a message');
}

/** Decodes an HTTP/1.1 chunked body (stops at the last complete chunk when truncated). */
export function dechunk(body: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  while (i < body.length) {
    const eol = body.indexOf('\r\n', i);
    if (eol < 0) break;
    const size = Number.parseInt(body.subarray(i, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    const start = eol + 2;
    if (start + size > body.length) {
      out.push(body.subarray(start));
      break;
    }
    out.push(body.subarray(start, start + size));
    i = start + size + 2;
  }
  return Buffer.concat(out);
}

/** A raw HTTP/1.1 request text (Connection: close) to /mcp; a body gets its Content-Length. */
function rawRequest(method: string, port: number, headers: Record<string, string>, body?: string): string {
  const lines = [`${method} /mcp HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}

/** A raw HTTP/1.1 request text (Connection: close) for a JSON POST. */
export function rawPost(port: number, headers: Record<string, string>, body: string): string {
  return rawRequest('POST', port, headers, body);
}

/** A raw HTTP/1.1 request text (Connection: close) for a GET (a stream, or its resume). */
export function rawGet(port: number, headers: Record<string, string>): string {
  return rawRequest('GET', port, headers);
}
