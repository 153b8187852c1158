/**
 * The stored form of a stream's Redis copy (replica.ts): its list holds **packs**, each a run of
 * consecutive frames of one batch (one tick of one stream), not one element per frame.
 *
 * A frame per element cost, per frame: an EVALSHA argument node-redis encoded, a Lua ARGV entry, an
 * RPUSH element and, once trimmed, an LPOP and its reply. Packs cost that once per batch; what is
 * left per frame is its bytes (UTF-8 encoding in node, the socket, Lua's copy of the argument: about
 * a nanosecond a byte each on the bench host), so a run of progress notifications is kept as their
 * values, as the memory store keeps it (events/progress-run.ts): a few bytes an event instead of a
 * frame of ~130.
 *
 * A pack is a header `<first seq> <count> <bytes> <kind>\n` (bytes: the UTF-8 bytes of its frames as
 * written to the socket, what the bounds count) and then
 * - kind F: the frames, concatenated. A frame as Sluice writes it (sse/encode.ts) ends with a blank
 *   line and has none before (its field lines are never empty, JSON data holds no raw line break),
 *   so the pack splits back into its frames at each `\n\n`; the sender checks that this split gives
 *   back exactly the frames it packed and never stores a batch for which it would not;
 * - kind P: a run of at least two progress notifications of one layout (jsonrpc/progress-json.ts):
 *   the id prefix, the layout's four text pieces and its number of values, one line each, then one
 *   line per event of its values' JSON texts separated by tabs (JSON text holds no raw tab or line
 *   break). The frame of event k is `id: <prefix><seq in base 36>\ndata: <p0>a<p1>b<p2>c<p3>\n\n`,
 *   as EventLog wrote it; the sender checks the first event's frame against that rendering.
 * The header lets the scripts (replica-scripts.ts) count frames and bytes without scanning; they
 * scan a pack only to drop some of its frames (a cut inside the head pack, or the frames of a
 * re-sent batch the copy already holds).
 *
 * Keys: `streamMeta`/`streamList` (keys.ts) carry a version, so that during a rolling upgrade a
 * member of the previous release (one frame per element, under other key names) and a member of
 * this one never read each other's copy: a resume finds no copy (`unknown`, the 503 an owner-less
 * stream got before it had a copy) instead of misreading one. Copies live minutes, so the old keys
 * simply expire; nothing converts them.
 */
import type { ProgressEvent, ProgressValue } from '../jsonrpc/progress-json.js';
import { jsonValue } from '../jsonrpc/progress-json.js';
import { encodeSeq } from '../sse/event-id.js';

/** A progress run shorter than this is copied as frames (a lone progress event between others). */
const MIN_RUN = 2;
const HEAD = /^(\d+) (\d+) (\d+) ([FP])\n/;
/** `id: `, `\ndata: ` and the closing blank line around an event's id and JSON text. */
const FRAME_OVERHEAD = 13;

/**
 * The packs of a batch's frames (the first is event `seq`), or undefined when a frame could not be
 * split back out of a pack (not written by sse/encode.ts): such a batch is not stored.
 */
export function encodePacks(
  seq: number,
  frames: readonly string[],
  parts: readonly (ProgressEvent | undefined)[],
): string[] | undefined {
  const out: string[] = [];
  let plainFrom = 0;
  let i = 0;
  while (i < frames.length) {
    const run = parts[i] === undefined ? undefined : progressPack(seq, frames, parts, i);
    if (run === undefined) {
      i++;
      continue;
    }
    if (plainFrom < i) {
      const f = framePack(seq + plainFrom, frames.slice(plainFrom, i));
      if (f === undefined) return undefined;
      out.push(f);
    }
    out.push(run.pack);
    i = run.end;
    plainFrom = i;
  }
  if (plainFrom < frames.length) {
    const f = framePack(seq + plainFrom, plainFrom === 0 ? frames : frames.slice(plainFrom));
    if (f === undefined) return undefined;
    out.push(f);
  }
  return out;
}

/** A kind F pack of these frames (the first is event `first`), or undefined (see encodePacks). */
function framePack(first: number, frames: readonly string[]): string | undefined {
  const body = frames.join('');
  let p = 0;
  for (const f of frames) {
    const end = body.indexOf('\n\n', p);
    p += f.length;
    if (end + 2 !== p) return undefined;
  }
  return `${first} ${frames.length} ${Buffer.byteLength(body)} F\n${body}`;
}

/** The UTF-8 bytes of a value's JSON text: only a string's can hold other than ASCII. */
class TextOf {
  #last: string | undefined;
  #lastText = '';
  #lastBytes = 0;
  text = '';
  bytes = 0;
  /** Sets text and bytes to the value's (a repeated string, as a message often is, is encoded once). */
  of(v: ProgressValue): void {
    if (typeof v !== 'string') {
      this.text = jsonValue(v);
      this.bytes = this.text.length;
      return;
    }
    if (v !== this.#last) {
      this.#last = v;
      this.#lastText = jsonValue(v);
      this.#lastBytes = Buffer.byteLength(this.#lastText);
    }
    this.text = this.#lastText;
    this.bytes = this.#lastBytes;
  }
}

/**
 * A kind P pack of the progress run starting at frame i, and the index after it; undefined when
 * fewer than MIN_RUN events from i share a layout and render back to their frames.
 */
function progressPack(
  seq: number,
  frames: readonly string[],
  parts: readonly (ProgressEvent | undefined)[],
  i: number,
): { pack: string; end: number } | undefined {
  const e = parts[i];
  const frame = frames[i];
  if (e === undefined || frame === undefined || parts[i + 1]?.layout !== e.layout) return undefined;
  const seqText = encodeSeq(seq + i);
  const nl = frame.indexOf('\n');
  if (!frame.startsWith('id: ') || nl < 4 + seqText.length) return undefined;
  const prefix = frame.slice(4, nl - seqText.length);
  const l = e.layout;
  const pieces = `${l.p0}\n${l.p1}\n${l.p2}\n${l.p3}`;
  if (pieces.split('\n').length !== 4 || `id: ${prefix}${seqText}\ndata: ${e.json}\n\n` !== frame)
    return undefined;
  const n = l.values;
  const piecesLength = l.p0.length + l.p1.length + l.p2.length + l.p3.length;
  const fixedBytes = FRAME_OVERHEAD + Buffer.byteLength(prefix) + Buffer.byteLength(pieces) - 3;
  const a = new TextOf();
  const b = new TextOf();
  const c = new TextOf();
  const lines: string[] = [];
  let bytes = 0;
  let seqLength = 1;
  let nextWider = 36;
  let j = i;
  for (; j < frames.length; j++) {
    const ej = parts[j];
    if (ej === undefined || ej.layout !== l) break;
    // The length of the seq's id text (encodeSeq's base 36), without making the text.
    while (seq + j >= nextWider) {
      seqLength++;
      nextWider *= 36;
    }
    a.of(n > 0 ? ej.a : null);
    b.of(n > 1 ? ej.b : null);
    c.of(n > 2 ? ej.c : null);
    const ta = n > 0 ? a.text : '';
    const tb = n > 1 ? b.text : '';
    const tc = n > 2 ? c.text : '';
    // The frame is `id: <prefix><seq>\ndata: <json>\n\n` with json the layout's text of these values
    // (EventLog hands the parts only then): checked by lengths, which cost nothing per event.
    if (
      ej.json.length !== piecesLength + ta.length + tb.length + tc.length ||
      (frames[j] as string).length !== FRAME_OVERHEAD + prefix.length + seqLength + ej.json.length
    )
      break;
    lines.push(n === 0 ? '' : n === 1 ? ta : n === 2 ? `${ta}\t${tb}` : `${ta}\t${tb}\t${tc}`);
    bytes += fixedBytes + seqLength + (n > 0 ? a.bytes : 0) + (n > 1 ? b.bytes : 0) + (n > 2 ? c.bytes : 0);
  }
  if (j - i < MIN_RUN) return undefined;
  const pack = `${seq + i} ${j - i} ${bytes} P\n${prefix}\n${pieces}\n${n}\n${lines.join('\n')}\n`;
  return { pack, end: j };
}

/**
 * The frames after `afterSeq` out of REPLAY's packs, which must run without a gap up to `last`;
 * undefined when they do not (not a copy this release wrote): the caller reports no copy.
 */
export function unpackAfter(
  packs: readonly unknown[],
  afterSeq: number,
  last: number,
): { seq: number; frame: string }[] | undefined {
  const out: { seq: number; frame: string }[] = [];
  if (packs.length === 0) return afterSeq === last ? out : undefined;
  let next: number | undefined;
  for (const el of packs) {
    if (typeof el !== 'string') return undefined;
    const m = HEAD.exec(el);
    if (m === null) return undefined;
    const first = Number(m[1]);
    const count = Number(m[2]);
    if (next === undefined ? first > afterSeq + 1 : first !== next) return undefined;
    const r: PackRead = { el, from: m[0].length, first, count, afterSeq, out };
    const ok = m[4] === 'F' ? unpackFrames(r) : unpackProgress(r);
    if (!ok) return undefined;
    next = first + count;
  }
  return next === last + 1 ? out : undefined;
}

/** One pack being read: its text, where its body starts, its header, and where its frames after `afterSeq` go. */
interface PackRead {
  el: string;
  from: number;
  first: number;
  count: number;
  afterSeq: number;
  out: { seq: number; frame: string }[];
}

function unpackFrames({ el, from, first, count, afterSeq, out }: PackRead): boolean {
  let p = from;
  for (let k = 0; k < count; k++) {
    const end = el.indexOf('\n\n', p);
    if (end < 0) return false;
    if (first + k > afterSeq) out.push({ seq: first + k, frame: el.slice(p, end + 2) });
    p = end + 2;
  }
  return p === el.length;
}

function unpackProgress({ el, from, first, count, afterSeq, out }: PackRead): boolean {
  const lines = el.slice(from).split('\n');
  // prefix, four pieces, the number of values, one line per event, and '' after the last newline.
  if (lines.length !== 6 + count + 1 || lines[6 + count] !== '') return false;
  const [prefix, p0, p1, p2, p3] = lines as [string, string, string, string, string];
  for (let k = Math.max(0, afterSeq + 1 - first); k < count; k++) {
    const [a = '', b = '', c = ''] = (lines[6 + k] as string).split('\t');
    const json = p0 + a + p1 + b + p2 + c + p3;
    out.push({ seq: first + k, frame: `id: ${prefix}${encodeSeq(first + k)}\ndata: ${json}\n\n` });
  }
  return true;
}
