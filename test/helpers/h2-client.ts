/**
 * A small MCP client over one node:http2 connection, for the HTTP/2 suite: requests are streams of
 * the same session, answers are parsed as they arrive (JSON or SSE), and each stream can be paused
 * (its window then stops being replenished, which is the server's backpressure signal).
 */
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect,
  type IncomingHttpHeaders,
} from 'node:http2';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { withDeadline } from './deadline.js';
import { ACCEPT_BOTH, initializeBody, LATEST, type Loose, notification } from './http.js';

export class H2Reply {
  status = 0;
  headers: IncomingHttpHeaders = {};
  text = '';
  readonly events: EventSourceMessage[] = [];
  ended = false;
  readonly stream: ClientHttp2Stream;
  readonly done: Promise<void>;
  /** Arrival time (ms) of each SSE message with data. */
  readonly arrivals: number[] = [];
  #listeners = new Set<() => void>();

  constructor(stream: ClientHttp2Stream) {
    this.stream = stream;
    const parser = createParser({
      onEvent: (e) => {
        this.events.push(e);
        if (e.data !== '') this.arrivals.push(Date.now());
      },
    });
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      this.text += chunk;
      if ((this.headers['content-type'] ?? '').startsWith('text/event-stream')) parser.feed(chunk);
      this.#notify();
    });
    this.done = new Promise((resolve) => {
      const fin = (): void => {
        if (this.ended) return;
        this.ended = true;
        this.#notify();
        resolve();
      };
      stream.on('end', fin);
      stream.on('close', fin);
      stream.on('error', fin);
    });
  }

  messages(): Loose[] {
    return this.events.filter((e) => e.data !== '').map((e) => JSON.parse(e.data));
  }

  json(): Loose {
    return JSON.parse(this.text);
  }

  waitFor(pred: (r: H2Reply) => boolean, ms: number, label: string): Promise<void> {
    if (pred(this)) return Promise.resolve();
    let l: (() => void) | undefined;
    const p = new Promise<void>((resolve, reject) => {
      l = () => {
        if (pred(this)) resolve();
        else if (this.ended)
          reject(new Error(`${label}: the stream ended first:\n${this.text.slice(-1500)}`));
      };
      this.#listeners.add(l);
    });
    return withDeadline(p, ms, label).finally(() => {
      if (l !== undefined) this.#listeners.delete(l);
    });
  }

  #notify(): void {
    for (const l of [...this.#listeners]) l();
  }
}

export class H2Session {
  readonly client: ClientHttp2Session;
  readonly path: string;
  sid: string | undefined;
  version: string | undefined;

  constructor(url: string, ca: Buffer) {
    const u = new URL(url);
    this.path = u.pathname;
    this.client = connect(u.origin, { ca });
    this.client.on('error', () => {});
  }

  /** Opens a stream and resolves at the response head (the body keeps coming). */
  request(method: string, headers: Record<string, string>, body?: string): Promise<H2Reply> {
    const h: Record<string, string> = { ':method': method, ':path': this.path, ...headers };
    if (this.sid !== undefined) h['mcp-session-id'] = this.sid;
    if (this.version !== undefined) h['mcp-protocol-version'] = this.version;
    const stream = this.client.request(h, { endStream: body === undefined });
    const reply = new H2Reply(stream);
    const head = new Promise<H2Reply>((resolve, reject) => {
      stream.once('response', (rh) => {
        reply.status = Number(rh[':status']);
        reply.headers = rh;
        resolve(reply);
      });
      stream.once('error', reject);
    });
    if (body !== undefined) stream.end(body);
    return withDeadline(head, 10_000, `${method} response head`);
  }

  post(message: unknown): Promise<H2Reply> {
    return this.request(
      'POST',
      { 'content-type': 'application/json', accept: ACCEPT_BOTH },
      JSON.stringify(message),
    );
  }

  async init(): Promise<void> {
    const r = await this.post(initializeBody(LATEST));
    await withDeadline(r.done, 5_000, 'initialize');
    if (r.status !== 200) throw new Error(`initialize: ${r.status} ${r.text}`);
    const sid = r.headers['mcp-session-id'];
    if (typeof sid !== 'string') throw new Error('initialize: no Mcp-Session-Id');
    this.sid = sid;
    this.version = LATEST;
    const n = await this.post(notification('notifications/initialized'));
    await withDeadline(n.done, 5_000, 'initialized');
    if (n.status !== 202) throw new Error(`initialized: ${n.status}`);
  }

  close(): void {
    this.client.close();
  }
}
