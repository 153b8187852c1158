/**
 * What the proxy tests (nginx-proxy, proxies) check of a stream that crossed a proxy, timed on the
 * client: progress arriving event by event rather than in a lump, and when the result came. The
 * margins are wide enough for a loaded CI machine but far below what buffering would produce.
 */
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/doctor/http.js';
import type { McpSession } from '../../src/doctor/session.js';
import { withDeadline } from './deadline.js';

/** tools/call with a progress token; resolves at the response head. */
export function callTool(
  s: McpSession,
  name: string,
  args: Record<string, unknown>,
  id: number,
): Promise<Exchange> {
  return withDeadline(
    s.request('tools/call', { name, arguments: args, _meta: { progressToken: `p${id}` } }, id),
    10_000,
    `${name} response head`,
  );
}

export function progressTimes(x: Exchange): number[] {
  return x
    .messages()
    .filter((m) => m.message['method'] === 'notifications/progress')
    .map((m) => m.at);
}

export function resultTime(x: Exchange, id: number): number | undefined {
  return x.messages().find((m) => m.message['id'] === id)?.at;
}

/** reindex: 10 progress notifications 100 ms apart; asserts they arrived one by one. */
export async function assertIncremental(s: McpSession, label: string): Promise<Exchange> {
  const x = await callTool(s, 'reindex', { corpus: 'proxied', docs: 10, delayMs: 100 }, 7);
  await withDeadline(x.done, 10_000, `${label}: reindex stream end`);
  assert.equal(x.status, 200);
  assert.ok(x.isSse, `${label}: the answer is an event stream (got ${x.contentType})`);
  const times = progressTimes(x);
  const end = resultTime(x, 7);
  const detail = `${label}: progress at [${times.map((t) => t.toFixed(0)).join(', ')}] ms, result at ${end?.toFixed(0)} ms`;
  assert.equal(times.length, 10, detail);
  assert.ok(end !== undefined && end >= 900, detail);
  assert.ok((times[0] ?? Infinity) < 400, `first progress within ~300 ms; ${detail}`);
  assert.ok((times[0] ?? Infinity) < end - 500, `first progress well before the result; ${detail}`);
  // Not one lump: the events are spread over the run, not bunched at the end.
  const spread = (times[times.length - 1] ?? 0) - (times[0] ?? 0);
  assert.ok(spread > 600, `progress spread over the run; ${detail}`);
  // Nor in clumps: sent 100 ms apart, events arriving together were held on the way (a machine
  // stalled once may join a pair; a proxy holding writes joins most of them).
  assert.ok(clumped(times) <= 2, `events one by one, not in clumps; ${detail}`);
  return x;
}

/** How many events arrived within 30 ms of the one before. */
export function clumped(times: readonly number[]): number {
  let n = 0;
  for (let i = 1; i < times.length; i++) if ((times[i] ?? 0) - (times[i - 1] ?? 0) < 30) n++;
  return n;
}
