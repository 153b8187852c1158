// The load client's view of the MCP Streamable HTTP wire, on an undici Dispatcher: the session
// handshake, request bodies, and checks of every response. Bodies are built from strings, and
// SSE is scanned for frame boundaries rather than fully parsed, so that the load generator
// spends as little CPU as it can (it is the bottleneck against the raw server).
import type { Dispatcher } from 'undici';

/** The protocol version the load client asks for; the server's answer is used afterwards. */
export const CLIENT_PROTOCOL_VERSION = '2025-11-25';

export interface Session {
  id: string;
  /** Headers for every later request of the session. */
  headers: Record<string, string>;
}

const POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The fields of JSON-RPC messages and tool results that the checks read. */
export interface Loose {
  id?: unknown;
  result?: unknown;
  error?: unknown;
  protocolVersion?: unknown;
  content?: unknown;
  text?: unknown;
}

function isObject(v: unknown): v is Loose {
  return typeof v === 'object' && v !== null;
}

function header(headers: Dispatcher.ResponseData['headers'], name: string): string {
  const v = headers[name];
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
}

/** The data fields of the complete SSE events in `text` (LF line ends, as every server here emits). */
export function sseData(text: string): string[] {
  const out: string[] = [];
  for (const frame of text.split('\n\n')) {
    const data: string[] = [];
    for (const line of frame.split('\n')) {
      if (line.startsWith('data:')) data.push(line.slice(line.charCodeAt(5) === 32 ? 6 : 5));
    }
    // An event with empty data is a priming event (2025-11-25 transports: an event id for
    // resumption and no message); there is nothing to parse in it.
    const joined = data.join('\n');
    if (joined !== '') out.push(joined);
  }
  return out;
}

/** The JSON-RPC message with `id` from a JSON or SSE body, or undefined. */
export function findResponse(contentType: string, body: string, id: number): Loose | undefined {
  const texts = contentType.startsWith('text/event-stream') ? sseData(body) : [body];
  for (const text of texts) {
    const msg: unknown = JSON.parse(text);
    if (isObject(msg) && msg.id === id) return msg;
  }
  return undefined;
}

/** The text of the first content item of a tools/call result, or undefined. */
export function resultText(msg: Loose | undefined): string | undefined {
  const result = msg?.result;
  if (!isObject(result) || !Array.isArray(result.content)) return undefined;
  const first: unknown = result.content[0];
  return isObject(first) && typeof first.text === 'string' ? first.text : undefined;
}

export function toolCallBody(id: number, name: string, args: string, progressToken?: number): string {
  const meta = progressToken === undefined ? '' : `,"_meta":{"progressToken":${progressToken}}`;
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}${meta}}}`;
}

/** initialize + notifications/initialized; throws with the server's answer if either fails. */
export async function openSession(
  d: Dispatcher,
  path: string,
  extra: Record<string, string> = {},
): Promise<Session> {
  const post = { ...POST_HEADERS, ...extra };
  const body = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"${CLIENT_PROTOCOL_VERSION}","capabilities":{},"clientInfo":{"name":"sluice-bench","version":"1.0.0"}}}`;
  const res = await d.request({ path, method: 'POST', headers: post, body });
  const text = await res.body.text();
  const id = header(res.headers, 'mcp-session-id');
  if (res.statusCode !== 200 || id === '') {
    throw new Error(`initialize: HTTP ${res.statusCode}, session "${id}": ${text.slice(0, 200)}`);
  }
  const result = findResponse(header(res.headers, 'content-type'), text, 0)?.result;
  const version = isObject(result) ? result.protocolVersion : undefined;
  if (typeof version !== 'string') throw new Error(`initialize: no protocolVersion in ${text.slice(0, 200)}`);
  const headers = { ...post, 'mcp-session-id': id, 'mcp-protocol-version': version };
  const note = await d.request({
    path,
    method: 'POST',
    headers,
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  });
  await note.body.text();
  if (note.statusCode !== 202) throw new Error(`notifications/initialized: HTTP ${note.statusCode}`);
  return { id, headers };
}

/** DELETE the session; a server without DELETE support (405) is fine. */
export async function closeSession(d: Dispatcher, path: string, s: Session): Promise<void> {
  const res = await d.request({ path, method: 'DELETE', headers: s.headers });
  await res.body.text();
  if (res.statusCode !== 200 && res.statusCode !== 204 && res.statusCode !== 405) {
    throw new Error(`DELETE session: HTTP ${res.statusCode}`);
  }
}

/**
 * One tools/call echo, checked (status, id, text). Returns undefined when the response is right,
 * or what was wrong with it.
 */
export async function callEcho(
  d: Dispatcher,
  path: string,
  s: Session,
  id: number,
): Promise<string | undefined> {
  const text = `hello ${id}`;
  const res = await d.request({
    path,
    method: 'POST',
    headers: s.headers,
    body: toolCallBody(id, 'echo', `{"text":"${text}"}`),
  });
  const body = await res.body.text();
  if (res.statusCode !== 200) return `echo: HTTP ${res.statusCode}: ${body.slice(0, 200)}`;
  const got = resultText(findResponse(header(res.headers, 'content-type'), body, id));
  return got === text ? undefined : `echo ${id}: unexpected body ${body.slice(0, 200)}`;
}

const PROGRESS_MARKER = '"notifications/progress"';

/** The `progress` value of one progress event's data, or NaN. */
function progressValue(data: string): number {
  const msg = JSON.parse(data) as { params?: { progress?: unknown } };
  const v = msg.params?.progress;
  return typeof v === 'number' ? v : Number.NaN;
}

/** The data of an SSE event that has a single data line, from `start` to `end` of `buf`. */
function singleData(buf: string, start: number, end: number): string {
  const d = buf.indexOf('data:', start);
  return d === -1 || d > end ? '' : buf.slice(d + 5, end);
}

/**
 * Counts the progress events of an SSE response as chunks arrive, and keeps the data of every
 * other event. Progress events are recognised by their method name. By default they are not
 * parsed (the load generator must stay cheap) and only the last one is kept, to read the final
 * progress value; with `parseEvents` every one is parsed and its progress value checked to
 * increase, as any real client must (the client-CPU floor in workload (e)).
 *
 * A server may coalesce progress events under backpressure (Sluice does, per token), so fewer
 * than `total` events can arrive; the last one must still carry the final value.
 */
export class SseScanner {
  /** Progress events received. */
  progress = 0;
  /** performance.now() when the first progress event was complete, or NaN. */
  firstProgressAt = Number.NaN;
  /** Data of the events that were not progress notifications (the result, in practice). */
  readonly others: string[] = [];
  /** With `parseEvents`: events whose progress value did not increase. */
  outOfOrder = 0;
  readonly #parseEvents: boolean;
  #lastProgressData = '';
  #lastProgressValue = 0;
  #pending = '';
  readonly #decoder = new TextDecoder();

  constructor(parseEvents = false) {
    this.#parseEvents = parseEvents;
  }

  /** Feeds one chunk of the body (bytes are decoded as UTF-8, split code points included). */
  push(bytes: Uint8Array): void {
    const chunk = this.#decoder.decode(bytes, { stream: true });
    const buf = this.#pending.length === 0 ? chunk : this.#pending + chunk;
    let start = 0;
    for (;;) {
      const end = buf.indexOf('\n\n', start);
      if (end === -1) break;
      const marker = buf.indexOf(PROGRESS_MARKER, start);
      if (marker !== -1 && marker < end) {
        if (this.progress === 0) this.firstProgressAt = performance.now();
        this.progress++;
        if (this.#parseEvents) {
          const value = progressValue(singleData(buf, start, end));
          if (!(value > this.#lastProgressValue)) this.outOfOrder++;
          this.#lastProgressValue = value;
        } else {
          this.#lastProgressData = singleData(buf, start, end);
        }
      } else {
        this.others.push(...sseData(buf.slice(start, end)));
      }
      start = end + 2;
    }
    this.#pending = start === buf.length ? '' : buf.slice(start);
  }

  /** The progress value of the last progress event (0 when none arrived). */
  lastProgress(): number {
    if (this.#parseEvents || this.#lastProgressData === '') return this.#lastProgressValue;
    return progressValue(this.#lastProgressData);
  }

  /** The response with `id` among the non-progress events, or undefined. */
  response(id: number): Loose | undefined {
    for (const data of this.others) {
      const msg: unknown = JSON.parse(data);
      if (isObject(msg) && msg.id === id) return msg;
    }
    return undefined;
  }
}

export interface FloodCall {
  status: number;
  bytes: number;
  scanner: SseScanner;
  /** What was wrong with the response, or undefined when the events and the result are right. */
  problem: string | undefined;
}

/** One tools/call flood with a progress token, read to the end and checked. */
export async function callFlood(
  d: Dispatcher,
  path: string,
  s: Session,
  id: number,
  count: number,
  payloadBytes: number,
  signal: AbortSignal,
  parseEvents = false,
): Promise<FloodCall> {
  const scanner = new SseScanner(parseEvents);
  const res = await d.request({
    path,
    method: 'POST',
    headers: s.headers,
    body: toolCallBody(id, 'flood', `{"count":${count},"payloadBytes":${payloadBytes}}`, id),
    signal,
  });
  let bytes = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    bytes += chunk.byteLength;
    scanner.push(chunk);
  }
  const text = resultText(scanner.response(id));
  let problem: string | undefined;
  if (res.statusCode !== 200) problem = `flood: HTTP ${res.statusCode}`;
  else if (scanner.progress > count || (count > 0 && scanner.progress === 0)) {
    problem = `flood: ${scanner.progress}/${count} events`;
  } else if (scanner.lastProgress() !== count) problem = `flood: last progress ${scanner.lastProgress()}`;
  else if (scanner.outOfOrder > 0) problem = `flood: ${scanner.outOfOrder} progress values did not increase`;
  else if (text !== `sent ${count}`) problem = `flood: result ${String(text)}`;
  return { status: res.statusCode, bytes, scanner, problem };
}
