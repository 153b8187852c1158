/**
 * The doctor's minimal MCP session over raw HTTP: initialize, requests, the GET stream and DELETE,
 * with the session id and protocol version headers the spec asks for (2025-11-25
 * basic/transports). Deliberately independent of the Sluice client: the doctor must judge a path
 * with as few moving parts of its own as possible.
 */
import { type Exchange, exchange } from './http.js';

export const PROTOCOL_VERSION = '2025-11-25';
export const ACCEPT_BOTH = 'application/json, text/event-stream';

export interface SessionOptions {
  /** Headers sent on every request (e.g. Authorization from --header). */
  headers?: Record<string, string>;
  /** Ask for compressed responses, as browsers do, so compression on the path shows. @defaultValue true */
  acceptEncoding?: string;
  /** Deadline for every response head. @defaultValue 10000 */
  headTimeoutMs?: number;
}

export class McpSession {
  readonly url: string;
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  #nextId = 1;
  readonly #extra: Record<string, string>;
  readonly #headTimeoutMs: number;

  /** The session the server assigned, once it did. */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** The protocol version the server chose, once it did. */
  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }

  constructor(url: string, o: SessionOptions = {}) {
    this.url = url;
    this.#extra = { 'accept-encoding': o.acceptEncoding ?? 'gzip, deflate, br', ...o.headers };
    this.#headTimeoutMs = o.headTimeoutMs ?? 10_000;
  }

  nextId(): number {
    return this.#nextId++;
  }

  headers(more: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = {
      'content-type': 'application/json',
      accept: ACCEPT_BOTH,
      ...this.#extra,
    };
    if (this.#sessionId !== undefined) h['mcp-session-id'] = this.#sessionId;
    if (this.#protocolVersion !== undefined) h['mcp-protocol-version'] = this.#protocolVersion;
    return { ...h, ...more };
  }

  /** Responses seen, and how many a Sluice cluster member relayed from the session's owner. */
  readonly routing = { responses: 0, forwarded: 0 };

  async send(
    method: string,
    headers: Record<string, string>,
    body?: string,
    headTimeoutMs?: number,
  ): Promise<Exchange> {
    const x = await exchange(this.url, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      headTimeoutMs: headTimeoutMs ?? this.#headTimeoutMs,
    });
    this.routing.responses++;
    if (x.headers.get('sluice-route') === 'forwarded') this.routing.forwarded++;
    return x;
  }

  /** POSTs initialize; on success records the session id and negotiated version. */
  async initialize(): Promise<Exchange> {
    const body = {
      jsonrpc: '2.0',
      id: this.nextId(),
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'sluice-doctor', version: '0.1.0' },
      },
    };
    const h = this.headers();
    delete h['mcp-session-id'];
    delete h['mcp-protocol-version'];
    const x = await this.send('POST', h, JSON.stringify(body));
    await x.done;
    if (x.status === 200) {
      this.#sessionId = x.headers.get('mcp-session-id') ?? undefined;
      const result = resultOf(x, body.id);
      const v = (result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      if (typeof v === 'string') this.#protocolVersion = v;
      const n = await this.send(
        'POST',
        this.headers(),
        JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      );
      await n.done;
    }
    return x;
  }

  /** POSTs a request; resolves at the response head. */
  request(
    method: string,
    params?: Record<string, unknown>,
    id = this.nextId(),
    headTimeoutMs?: number,
  ): Promise<Exchange> {
    const msg =
      params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
    return this.send('POST', this.headers(), JSON.stringify(msg), headTimeoutMs);
  }

  /** POSTs a request and waits for the whole answer; returns its result (undefined on error). */
  async call(method: string, params?: Record<string, unknown>): Promise<{ x: Exchange; result: unknown }> {
    const id = this.nextId();
    const x = await this.request(method, params, id);
    await x.done;
    return { x, result: resultOf(x, id) };
  }

  /** Opens the standalone GET stream (or resumes one with Last-Event-ID). */
  get(more: Record<string, string> = {}, headTimeoutMs?: number): Promise<Exchange> {
    const h = this.headers({ accept: 'text/event-stream', ...more });
    delete h['content-type'];
    return this.send('GET', h, undefined, headTimeoutMs);
  }

  async delete(): Promise<Exchange> {
    const h = this.headers();
    delete h['content-type'];
    const x = await this.send('DELETE', h);
    await x.done;
    return x;
  }
}

/** The `result` of the JSON-RPC response with this id, from a JSON or SSE body. */
export function resultOf(x: Exchange, id: number | string): unknown {
  const r = responseOf(x, id);
  return r === undefined ? undefined : r['result'];
}

/** The JSON-RPC response with this id, from a JSON or SSE body. */
export function responseOf(x: Exchange, id: number | string): Record<string, unknown> | undefined {
  if (x.isSse) {
    const m = x.messages().find((m) => m.message['id'] === id && !('method' in m.message));
    return m?.message;
  }
  const j = x.json();
  if (typeof j === 'object' && j !== null && !Array.isArray(j)) return j as Record<string, unknown>;
  return undefined;
}
