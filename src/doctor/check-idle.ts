/**
 * Does a quiet stream survive N seconds, and if not, at which second was it cut? The standalone GET
 * stream is held open (or, without one, a `sleep` tool call longer than N seconds). Keepalive
 * comments seen on the way tell whether the server is keeping it warm, and at what interval.
 */
import { idleFix } from './fixes.js';
import { type Exchange, errorText } from './http.js';
import type { McpSession } from './session.js';
import { argumentsFor, type ToolInfo } from './tools.js';
import type { Verdict } from './types.js';

/** A head later than this means a proxy held it (buffering); idle behaviour is then hidden. */
const HEAD_HELD_MS = 5_000;

interface Quiet {
  x: Exchange;
  how: string;
  /** The JSON-RPC id whose result ends the stream normally (sleep), if any. */
  id?: number;
}

async function openQuiet(s: McpSession, seconds: number, tools: ToolInfo[]): Promise<Quiet | string> {
  let why: string;
  try {
    const g = await s.get({}, HEAD_HELD_MS);
    if (g.status === 200 && g.isSse) return { x: g, how: 'GET stream' };
    g.cancel();
    why = `GET answered ${g.status}`;
  } catch (e) {
    const msg = errorText(e);
    if (/no response head/.test(msg)) {
      return `the GET stream's response head did not arrive within ${HEAD_HELD_MS / 1000} s — held by a buffering proxy (see buffering)`;
    }
    why = `GET: ${msg}`;
  }
  const sleep = tools.find((t) => t.name === 'sleep');
  if (sleep === undefined) return `${why}, and the server has no sleep tool`;
  const id = s.nextId();
  const ms = (seconds + 5) * 1000;
  const x = await s.request(
    'tools/call',
    { name: 'sleep', arguments: argumentsFor(sleep, ms, 1) },
    id,
    ms + 15_000,
  );
  if (x.headAt > HEAD_HELD_MS) {
    x.cancel();
    return `the response head of a quiet call was held ${Math.round(x.headAt / 1000)} s — a buffering proxy hides idle behaviour (see buffering)`;
  }
  if (x.status === 200 && x.isSse) return { x, how: `tools/call sleep ${seconds + 5} s`, id };
  x.cancel();
  return `${why}; sleep answered ${x.status} ${x.contentType}`;
}

const tenths = (ms: number): number => Math.round(ms / 100) / 10;

export async function checkIdle(s: McpSession, seconds: number, tools: ToolInfo[]): Promise<Verdict> {
  let opened: Quiet | string;
  try {
    opened = await openQuiet(s, seconds, tools);
  } catch (e) {
    opened = errorText(e);
  }
  if (typeof opened === 'string') {
    return { id: 'idle', status: 'skip', reason: `no quiet stream to hold open: ${opened}` };
  }
  const { x, how, id } = opened;
  await x.waitFor(() => false, seconds * 1000);
  const completed = id !== undefined && x.messages().some((m) => m.message['id'] === id);
  const cut = x.ended && !completed;
  x.cancel();
  const keepalives = x.items.filter((i) => i.kind === 'comment' && /keep/i.test(i.data)).map((i) => i.at);
  const gaps = keepalives.slice(1).map((t, i) => t - (keepalives[i] ?? 0));
  const interval = gaps.length > 0 ? tenths(Math.max(...gaps)) : undefined;
  const lastByte = x.lastByteAt ?? x.headAt;
  const cutAt = cut ? tenths(x.endAt ?? 0) : undefined;
  const quiet = cut ? tenths((x.endAt ?? 0) - lastByte) : undefined;
  const details = {
    probe: how,
    heldSeconds: seconds,
    cutAtSeconds: cutAt ?? null,
    quietBeforeCutSeconds: quiet ?? null,
    keepalives: keepalives.length,
    keepaliveIntervalSeconds: interval ?? null,
    error: x.error ?? null,
  };
  const ka =
    keepalives.length === 0
      ? 'no keepalive comments from the server'
      : `keepalive comments ${interval === undefined ? 'seen' : `every ~${interval} s`}`;
  if (cut) {
    return {
      id: 'idle',
      status: 'fail',
      reason: `${how} was cut at second ${cutAt} after ${quiet} s of silence (${ka}) — an idle timeout on the path`,
      details,
      fix: idleFix(Math.max(1, Math.floor(quiet ?? 1))),
    };
  }
  if (completed) {
    return { id: 'idle', status: 'ok', reason: `${how} completed without being cut (${ka})`, details };
  }
  if (keepalives.length === 0) {
    return {
      id: 'idle',
      status: 'warn',
      reason: `${how} survived ${seconds} s, but with ${ka} in that time: if the server sends none at all, a longer silence will meet an idle timeout (ALB 60 s, Cloudflare ~100 s); rerun with --idle-seconds above its keepalive interval`,
      details,
      fix: idleFix(undefined),
    };
  }
  return { id: 'idle', status: 'ok', reason: `${how} survived ${seconds} s quiet (${ka})`, details };
}
