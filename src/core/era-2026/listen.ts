/**
 * `subscriptions/listen` (MCP 2026-07-28 basic/patterns/subscriptions): a long-lived SSE answer
 * that replaces the legacy GET stream.
 * - The first message is `notifications/subscriptions/acknowledged` with the honoured filter: what
 *   the client asked for, narrowed to what the served server's capabilities announce.
 * - Only the kinds asked for are sent, each tagged with `_meta.subscriptionId` = the request id.
 * - A slow reader gets a coalescing backlog (listen-queue.ts), never a cut.
 * - Keepalive comments come from the endpoint's shared timer (only while nothing is queued).
 * - The client closing the stream ends the subscription; the server ending it (close()) first sends
 *   the listen result `{resultType: "complete", _meta: {subscriptionId}}`.
 */

import type { RequestId } from '../../jsonrpc/message.js';
import { isPlainObject as isObject } from '../../jsonrpc/message.js';
import { META_SUBSCRIPTION_ID } from '../../modern/constants.js';
import { encodeJsonFrame } from '../../sse/encode.js';
import { SseConnection } from '../answer/connection.js';
import type { ChangeEvent } from '../change-bus.js';
import type { PostInput } from '../pipeline/route.js';
import { SSE_HEADERS } from '../stream/stream-context.js';
import { armGuard } from '../stream/stream-guard.js';
import type { ModernEra } from './era.js';
import { CoalescingQueue } from './listen-queue.js';

export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/** Resource URIs one listen stream may follow. */
export const MAX_RESOURCE_SUBSCRIPTIONS = 256;
const MAX_URI_LENGTH = 4096;

/** The filter of a listen request, or why it is malformed. */
export function parseFilter(params: Record<string, unknown> | undefined): ListenFilter | string {
  const n = params?.['notifications'];
  if (!isObject(n)) return 'params.notifications must be an object';
  const f: ListenFilter = {};
  for (const k of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) {
    const v = n[k];
    if (v === undefined) continue;
    if (typeof v !== 'boolean') return `notifications.${k} must be a boolean`;
    if (v) f[k] = true;
  }
  const subs = n['resourceSubscriptions'];
  if (subs !== undefined) {
    if (
      !Array.isArray(subs) ||
      !subs.every((u) => typeof u === 'string' && u.length > 0 && u.length <= MAX_URI_LENGTH)
    )
      return 'notifications.resourceSubscriptions must be an array of URIs';
    if (subs.length > MAX_RESOURCE_SUBSCRIPTIONS)
      return `notifications.resourceSubscriptions holds at most ${MAX_RESOURCE_SUBSCRIPTIONS} URIs`;
    if (subs.length > 0) f.resourceSubscriptions = [...new Set(subs as string[])];
  }
  return f;
}

/** The part of the filter the server's capabilities can honour. */
export function honouredFilter(f: ListenFilter, caps: Record<string, unknown>): ListenFilter {
  const flag = (cap: string, field: string): boolean => {
    const c = caps[cap];
    return isObject(c) && c[field] === true;
  };
  const h: ListenFilter = {};
  if (f.toolsListChanged && flag('tools', 'listChanged')) h.toolsListChanged = true;
  if (f.promptsListChanged && flag('prompts', 'listChanged')) h.promptsListChanged = true;
  if (f.resourcesListChanged && flag('resources', 'listChanged')) h.resourcesListChanged = true;
  if (f.resourceSubscriptions !== undefined && flag('resources', 'subscribe'))
    h.resourceSubscriptions = f.resourceSubscriptions;
  return h;
}

const METHOD: Record<ChangeEvent['kind'], string> = {
  tools: 'notifications/tools/list_changed',
  prompts: 'notifications/prompts/list_changed',
  resources: 'notifications/resources/list_changed',
  resource: 'notifications/resources/updated',
};

export class ListenStream {
  readonly #era: ModernEra;
  readonly #input: PostInput;
  readonly #id: RequestId;
  readonly #filter: ListenFilter;
  readonly #uris: Set<string>;
  readonly #queue = new CoalescingQueue();
  /** Wait-for-room: a listen stream is never cut for a slow reader (answer/connection.ts). */
  #conn: SseConnection | undefined;
  #unsubscribe: (() => void) | undefined;
  #waiting = false;
  #ended = false;

  constructor(era: ModernEra, input: PostInput, id: RequestId, filter: ListenFilter) {
    this.#era = era;
    this.#input = input;
    this.#id = id;
    this.#filter = filter;
    this.#uris = new Set(filter.resourceSubscriptions ?? []);
  }

  get principal(): string | undefined {
    return this.#input.auth?.principal;
  }

  open(): void {
    const era = this.#era;
    const sink = this.#input.sink;
    const c = new SseConnection(sink, era.core.connections, 'wait-for-room');
    this.#conn = c;
    era.state.listenOpened(this);
    sink.onClose(() => this.#release());
    const ack = {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: this.#filter, _meta: { [META_SUBSCRIPTION_ID]: this.#id } },
    };
    era.core.counters.add('responsesSse');
    era.core.counters.metrics?.mode('subscriptions/listen', 'sse');
    c.open(200, { ...SSE_HEADERS, ...this.#input.headers }, encodeJsonFrame(undefined, JSON.stringify(ack)));
    this.#unsubscribe = era.state.bus.subscribe((ev) => this.#onChange(ev));
    armGuard(sink, this.#input.guard, era.core.options.now, () => {
      era.core.counters.add('authStreamEnds');
      this.end();
    });
  }

  /** Server-side end: the listen result, then the end of the stream. */
  end(): void {
    if (this.#ended) return;
    const c = this.#conn;
    const result = {
      jsonrpc: '2.0',
      id: this.#id,
      result: { resultType: 'complete', _meta: { [META_SUBSCRIPTION_ID]: this.#id } },
    };
    this.#release();
    if (c !== undefined && !c.closed) {
      // Ending is the server's (close, credential expiry): the result goes if it fits the queue, and
      // the stream ends now either way rather than wait on a reader that may never drain it.
      c.write(encodeJsonFrame(undefined, JSON.stringify(result)));
      c.end();
    }
  }

  #onChange(ev: ChangeEvent): void {
    if (this.#ended) return;
    const f = this.#filter;
    let key: string;
    const params: Record<string, unknown> = { _meta: { [META_SUBSCRIPTION_ID]: this.#id } };
    if (ev.kind === 'tools' && f.toolsListChanged) key = 't';
    else if (ev.kind === 'prompts' && f.promptsListChanged) key = 'p';
    else if (ev.kind === 'resources' && f.resourcesListChanged) key = 'r';
    else if (ev.kind === 'resource' && this.#uris.has(ev.uri)) {
      key = `u${ev.uri}`;
      params['uri'] = ev.uri;
    } else return;
    const frame = encodeJsonFrame(
      undefined,
      JSON.stringify({ jsonrpc: '2.0', method: METHOD[ev.kind], params }),
    );
    const before = this.#queue.coalesced;
    this.#queue.put(key, frame);
    if (this.#queue.coalesced !== before) this.#era.state.counts.add('listenCoalesced');
    this.#flush();
  }

  #flush(): void {
    const c = this.#conn;
    if (c === undefined || this.#ended) return;
    const w = c.writer;
    // The backlog coalesces here rather than in the writer's queue: write only while the socket takes bytes.
    while (!w.blocked && !w.closed) {
      const f = this.#queue.take();
      if (f === undefined) return;
      if (c.write(f) !== 'closed') this.#era.core.counters.add('eventsWritten');
    }
    if (this.#queue.size > 0 && !w.closed && !this.#waiting) {
      this.#waiting = true;
      void w.waitForRoom().then(() => {
        this.#waiting = false;
        this.#flush();
      });
    }
  }

  #release(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#era.state.listenClosed(this);
  }
}
