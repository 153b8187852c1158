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
 *   as EventLog wrote it; the sender checks the first event's frame against that rendering;
 * - kind R: such a run whose every value column is regular: the same prefix, pieces and number of
 *   values, then one line per column instead of one per event: `=` and the JSON text every event
 *   has, or `+<start> <step>`, integers, event k's value being start + k × step. A tool counting its
 *   progress up with a constant total (the usual loop) is such a run: a few dozen bytes however
 *   long, and nothing per event to write in node, send, or copy in Lua.
 * The header lets the scripts (replica-scripts.ts) count frames and bytes without scanning; they
 * scan a pack only to drop some of its frames (a cut inside the head pack, or the frames of a
 * re-sent batch the copy already holds).
 *
 * Keys: `streamMeta`/`streamList` (keys.ts) carry a version (3 since kind R), so that during a
 * rolling upgrade a member of a previous release (one frame per element, or packs without kind R,
 * under other key names) and a member of this one never read each other's copy: a resume finds no copy (`unknown`, the 503 an owner-less
 * stream got before it had a copy) instead of misreading one. Copies live minutes, so the old keys
 * simply expire; nothing converts them.
 */
import type { ProgressEvent, ProgressValue } from '../jsonrpc/progress-json.js';
import { encodeJsonFrame } from '../sse/encode.js';
import { encodeSeq } from '../sse/event-id.js';

/** A progress run shorter than this is copied as frames (a lone progress event between others). */
const MIN_RUN = 2;
const HEAD = /^(\d+) (\d+) (\d+) ([FPR])\n/;
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

/**
 * The UTF-8 bytes of value texts: a string's JSON text may hold other than ASCII and is measured
 * (once while it repeats: ProgressJson hands the same text object for a repeated string), any other
 * value's text is ASCII.
 */
class Utf8Of {
  #last = '';
  #lastBytes = 0;
  of(v: ProgressValue, text: string): number {
    if (typeof v !== 'string') return text.length;
    if (text !== this.#last) {
      this.#last = text;
      this.#lastBytes = Buffer.byteLength(text);
    }
    return this.#lastBytes;
  }
}

/**
 * Whether a value column of a run is regular: the same value throughout (kept as one text), or
 * integers with a constant step (kept as start and step; the scripts compute start + k × step in
 * Lua's doubles, exact while every value stays under ARITH_LIMIT). A flood's `progress` counting up
 * by one and its constant `total` are both: the run then costs a few bytes however long it is.
 */
class ColumnShape {
  #first: ProgressValue = null;
  #step = 0;
  #count = 0;
  /** 0: every value so far is the first; 1: integers with a constant step; 2: neither. */
  #kind = 0;

  add(v: ProgressValue): void {
    const k = this.#count++;
    if (k === 0) this.#first = v;
    else if (this.#kind === 0 && v === this.#first) {
      // Identical values give identical JSON (0 and -0 both write "0").
    } else if (this.#kind === 2 || typeof v !== 'number' || !isArithInt(v)) this.#kind = 2;
    else if (this.#kind === 0) {
      const first = this.#first;
      this.#kind = k === 1 && typeof first === 'number' && isArithInt(first) ? 1 : 2;
      this.#step = v - (first as number);
      // Event k's value is first + k × step: no spurious match past 2^53, since |v| < ARITH_LIMIT.
    } else if (v !== (this.#first as number) + k * this.#step) this.#kind = 2;
  }

  get regular(): boolean {
    return this.#kind !== 2;
  }

  /** The column's line in an R pack (only when regular): `=` and the text, or `+start step`. */
  line(firstText: string): string {
    return this.#kind === 0 ? `=${firstText}` : `+${String(this.#first)} ${String(this.#step)}`;
  }
}

/** Values of an arithmetic column stay under this, so Lua's start + k × step is exact (below 2^53). */
const ARITH_LIMIT = 2 ** 51;

function isArithInt(v: number): boolean {
  return Number.isInteger(v) && Math.abs(v) < ARITH_LIMIT;
}

/**
 * A pack of the progress run starting at frame i (kind R when every value column is regular, P
 * otherwise), and the index after it; undefined when fewer than MIN_RUN events from i share a layout
 * and render back to their frames.
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
  if (pieces.split('\n').length !== 4 || encodeJsonFrame(prefix + seqText, e.json) !== frame)
    return undefined;
  const n = l.values;
  const fixedBytes = FRAME_OVERHEAD + Buffer.byteLength(prefix) + Buffer.byteLength(pieces) - 3;
  const frameFixed = FRAME_OVERHEAD + prefix.length;
  const ua = new Utf8Of();
  const ub = new Utf8Of();
  const uc = new Utf8Of();
  const ca = new ColumnShape();
  const cb = new ColumnShape();
  const cc = new ColumnShape();
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
    // The frame is `id: <prefix><seq>\ndata: <json>\n\n`, json the layout's text of the event's
    // value texts (ProgressEvent makes it so, and EventLog wrote the frame from it): checked by
    // length, which costs nothing per event.
    if ((frames[j] as string).length !== frameFixed + seqLength + ej.json.length) break;
    bytes += fixedBytes + seqLength;
    if (n > 0) {
      bytes += ua.of(ej.a, ej.ta);
      ca.add(ej.a);
    }
    if (n > 1) {
      bytes += ub.of(ej.b, ej.tb);
      cb.add(ej.b);
    }
    if (n > 2) {
      bytes += uc.of(ej.c, ej.tc);
      cc.add(ej.c);
    }
  }
  if (j - i < MIN_RUN) return undefined;
  const start = `${seq + i} ${j - i} ${bytes}`;
  const meta = `${prefix}\n${pieces}\n${n}\n`;
  if ((n < 1 || ca.regular) && (n < 2 || cb.regular) && (n < 3 || cc.regular)) {
    let cols = '';
    if (n > 0) cols += `${ca.line(e.ta)}\n`;
    if (n > 1) cols += `${cb.line(e.tb)}\n`;
    if (n > 2) cols += `${cc.line(e.tc)}\n`;
    return { pack: `${start} R\n${meta}${cols}`, end: j };
  }
  const lines: string[] = [];
  for (let k = i; k < j; k++) {
    const ek = parts[k] as ProgressEvent;
    lines.push(
      n === 0 ? '' : n === 1 ? ek.ta : n === 2 ? `${ek.ta}\t${ek.tb}` : `${ek.ta}\t${ek.tb}\t${ek.tc}`,
    );
  }
  return { pack: `${start} P\n${meta}${lines.join('\n')}\n`, end: j };
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
    const ok = m[4] === 'F' ? unpackFrames(r) : unpackRun(r, m[4] === 'P' ? 'P' : 'R');
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

/** A P or R pack: the run's header lines, then its values per event (P) or per value column (R). */
function unpackRun(r: PackRead, kind: 'P' | 'R'): boolean {
  const { el, from, first, count, afterSeq, out } = r;
  const lines = el.slice(from).split('\n');
  const [prefix, p0, p1, p2, p3] = lines as [string, string, string, string, string];
  // prefix, four pieces, the number of values, one line per event (P) or per column (R), and ''
  // after the last newline.
  const body = kind === 'P' ? count : Number(lines[5]);
  if (!(body >= 0 && (kind === 'P' || body <= 3)) || lines.length !== 6 + body + 1 || lines[6 + body] !== '')
    return false;
  const texts =
    kind === 'P'
      ? (k: number) => (lines[6 + k] as string).split('\t')
      : columnTexts(lines.slice(6, 6 + body));
  if (texts === undefined) return false;
  for (let k = Math.max(0, afterSeq + 1 - first); k < count; k++) {
    const [a = '', b = '', c = ''] = texts(k);
    out.push({
      seq: first + k,
      frame: encodeJsonFrame(prefix + encodeSeq(first + k), p0 + a + p1 + b + p2 + c + p3),
    });
  }
  return true;
}

/** An R pack's column lines as event k's value texts; undefined when a line is not one of ours. */
function columnTexts(lines: readonly string[]): ((k: number) => string[]) | undefined {
  const cols: ((k: number) => string)[] = [];
  for (const line of lines) {
    if (line.startsWith('=')) {
      const text = line.slice(1);
      cols.push(() => text);
      continue;
    }
    const m = /^\+(-?\d+) (-?\d+)$/.exec(line);
    const start = Number(m?.[1]);
    const step = Number(m?.[2]);
    if (m === null || !Number.isSafeInteger(start) || !Number.isSafeInteger(step)) return undefined;
    cols.push((k) => String(start + k * step));
  }
  return (k) => cols.map((col) => col(k));
}
