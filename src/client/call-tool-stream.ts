/**
 * Partial tool output on the client (docs/partial-results.md): a tool call as an async iterator of
 * its partial output, in order, then its result.
 *
 *   for await (const part of callToolStream(client, { name: 'generate', arguments: { words: 50 } })) {
 *     if (part.type === 'partial') process.stdout.write(part.text);
 *     else if (part.type === 'result') console.log(part.result);
 *   }
 *
 * Works over any SDK `Client` and transport, against any server that sends partial output in the
 * form of jsonrpc/partial.ts: progress notifications marked with `{ seq, n }`, or the draft SEP's
 * `notifications/tools/partial_result` when the client declared `partialResults` in its
 * capabilities. Each partial is checked against the sequence: a gap (a delta missing) or a
 * reordering ends the iteration with a {@link PartialSequenceError}, and the call is cancelled.
 * Progress without the marker is yielded as `{ type: 'progress' }` (status, not output).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, Notification, Progress } from '@modelcontextprotocol/sdk/types.js';
import {
  PARTIAL_CAPABILITY,
  PARTIAL_RESULT_METHOD,
  PARTIAL_TOKEN_META,
  type PartialMarker,
  partialMarkerOf,
} from '../jsonrpc/partial.js';
import { SluiceClientError } from './errors.js';

/** A gap or reordering in a call's partial output: what was expected and what came. */
export class PartialSequenceError extends SluiceClientError {
  readonly expected: number;
  readonly received: number;
  constructor(expected: number, received: number) {
    super(
      'SLUICE_CLIENT_PARTIAL_SEQUENCE',
      `partial output out of sequence: expected delta ${expected}, received ${received} (${received > expected ? 'gap' : 'reordered or repeated'})`,
    );
    this.expected = expected;
    this.received = received;
  }
}

export type ToolStreamPart =
  /** Deltas seq … seq+n-1 (n > 1 when the server merged queued deltas). `text` is their text. */
  | { type: 'partial'; text: string; seq: number; n: number; content?: unknown[] }
  /** Ordinary progress (status), not partial output. */
  | { type: 'progress'; progress: Progress }
  | { type: 'result'; result: CallToolResult };

export interface CallToolStreamParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

let tokens = 0;

/** Per client: the calls awaiting SEP partial results, by token (one handler installed per client). */
const sepRoutes = new WeakMap<Client, Map<string, (params: Record<string, unknown>) => void>>();

function sepRoute(client: Client): Map<string, (params: Record<string, unknown>) => void> {
  let routes = sepRoutes.get(client);
  if (routes === undefined) {
    const r = new Map<string, (params: Record<string, unknown>) => void>();
    routes = r;
    sepRoutes.set(client, r);
    const previous = client.fallbackNotificationHandler;
    client.fallbackNotificationHandler = async (n: Notification): Promise<void> => {
      const p = n.params as Record<string, unknown> | undefined;
      const token = p?.[PARTIAL_TOKEN_META];
      const route =
        n.method === PARTIAL_RESULT_METHOD && typeof token === 'string' ? r.get(token) : undefined;
      if (route !== undefined && p !== undefined) route(p);
      else await previous?.(n);
    };
  }
  return routes;
}

interface ContentItem {
  type?: unknown;
  text?: unknown;
}

function textOf(content: unknown): { text: string; rest: unknown[] | undefined } {
  let text = '';
  const rest: unknown[] = [];
  if (Array.isArray(content)) {
    for (const c of content as ContentItem[]) {
      if (c?.type === 'text' && typeof c.text === 'string') text += c.text;
      else rest.push(c);
    }
  }
  return { text, rest: rest.length > 0 ? rest : undefined };
}

/** Calls a tool and yields its partial output in order, then its result (see the module comment). */
export async function* callToolStream(
  client: Client,
  params: CallToolStreamParams,
  options: RequestOptions = {},
): AsyncGenerator<ToolStreamPart, void, undefined> {
  const queue: ToolStreamPart[] = [];
  let failure: unknown;
  let finished = false;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  let expected = 0;
  const abort = new AbortController();
  const accept = (marker: PartialMarker, text: string, content: unknown[] | undefined): void => {
    if (failure !== undefined) return;
    if (marker.seq !== expected) {
      failure = new PartialSequenceError(expected, marker.seq);
      abort.abort(failure);
      notify();
      return;
    }
    expected += marker.n;
    queue.push(
      content === undefined
        ? { type: 'partial', text, seq: marker.seq, n: marker.n }
        : { type: 'partial', text, seq: marker.seq, n: marker.n, content },
    );
    notify();
  };

  // The draft SEP's form, when this client declared the capability: its own token and notification.
  const sep = (client as unknown as { _capabilities?: Record<string, unknown> })._capabilities?.[
    PARTIAL_CAPABILITY
  ];
  // Unique per client and call; no platform API (this module also ships to browsers).
  const sepToken =
    sep !== undefined && sep !== null
      ? `sluice-prt-${++tokens}-${Math.random().toString(36).slice(2, 10)}`
      : undefined;
  if (sepToken !== undefined) {
    sepRoute(client).set(sepToken, (p) => {
      // A server that does not mark frames still numbers them (the SEP's own seq, one chunk each).
      const marker = partialMarkerOf(p) ?? { seq: typeof p['seq'] === 'number' ? p['seq'] : -1, n: 1 };
      const { text, rest } = textOf(p['content']);
      accept(marker, text, rest);
    });
  }

  const signal = options.signal;
  const onOuterAbort = (): void => abort.abort(signal?.reason);
  signal?.addEventListener('abort', onOuterAbort, { once: true });
  const meta = {
    ...(params._meta ?? {}),
    ...(sepToken === undefined ? {} : { [PARTIAL_TOKEN_META]: sepToken }),
  };
  const call = client
    .callTool({ name: params.name, arguments: params.arguments ?? {}, _meta: meta }, undefined, {
      ...options,
      signal: abort.signal,
      onprogress: (p: Progress) => {
        const marker = partialMarkerOf(p);
        if (marker === undefined) queue.push({ type: 'progress', progress: p });
        else {
          accept(marker, typeof p.message === 'string' ? p.message : '', marker.content);
          return;
        }
        notify();
      },
    })
    .then(
      (result) => {
        queue.push({ type: 'result', result: result as CallToolResult });
        finished = true;
        notify();
      },
      (error: unknown) => {
        failure ??= error;
        finished = true;
        notify();
      },
    );
  try {
    for (;;) {
      const part = queue.shift();
      if (part !== undefined) {
        yield part;
        continue;
      }
      if (failure !== undefined) throw failure;
      if (finished) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    signal?.removeEventListener('abort', onOuterAbort);
    if (!finished) abort.abort(new Error('callToolStream: the consumer stopped iterating'));
    await call;
    if (sepToken !== undefined) sepRoutes.get(client)?.delete(sepToken);
  }
}
