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
import { ArrivingBody } from './arriving-body.js';
import { withDeadline } from './deadline.js';
import { ACCEPT_BOTH, initializeBody, isEventStream, LATEST, notification } from './http.js';

export class H2Reply extends ArrivingBody {
  status = 0;
  headers: IncomingHttpHeaders = {};
  readonly stream: ClientHttp2Stream;

  constructor(stream: ClientHttp2Stream) {
    // The head lands after construction (H2Session.request sets it): ask at every chunk.
    super(stream, () => isEventStream(this.headers));
    this.stream = stream;
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
