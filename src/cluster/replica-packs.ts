/**
 * The stored form of a stream's Redis copy (replica.ts): its list holds **packs**, one element per
 * batch of consecutive frames (one tick of one stream), not one element per frame.
 *
 * A frame per element cost, per frame: an EVALSHA argument node-redis encoded, a Lua ARGV entry, an
 * RPUSH element and, once trimmed, an LPOP and its reply; at tens of thousands of progress events a
 * second that was more CPU than the stream itself (docs/benchmarks.md, (i)). A pack costs that once
 * per batch.
 *
 * An element is a header `<first seq> <frame count>\n` followed by the frames, concatenated. A frame
 * as Sluice writes it (sse/encode.ts) ends with a blank line and has none before: its field lines
 * are never empty, and JSON data holds no raw line break. So a pack splits back into its frames at
 * each `\n\n`; the sender checks that this split gives back exactly the frames it packed
 * (`packFrames`) and never stores a batch for which it would not. The header lets the scripts count
 * frames and find a seq without scanning; they scan a pack only to drop some of its frames (a trim
 * inside the head pack, or the frames of a re-sent batch the copy already holds).
 *
 * Keys: `streamMeta`/`streamList` (keys.ts) carry a version, so that during a rolling upgrade a
 * member of the previous release (one frame per element, under other key names) and a member of
 * this one never read each other's copy: a resume finds no copy (`unknown`, the 503 an owner-less
 * stream got before it had a copy) instead of misreading one. Copies live minutes, so the old keys
 * simply expire; nothing converts them.
 */
import { Script } from './scripts.js';

/** Lua: the header at the start of element `el` (first seq, count, and where the frames begin), or nil. */
const PARSE_HEAD = `
local function head(el)
  local s, c, at = string.match(el, '^(%d+) (%d+)\\n()')
  if not s then return nil end
  return tonumber(s), tonumber(c), at
end
-- Where the frame starting at byte p of el ends (its last byte), or nil when none does.
local function frameEnd(el, p)
  local e = string.find(el, '\\n\\n', p, true)
  if e then return e + 1 end
  return nil
end`;

/**
 * KEYS meta, list; ARGV seq, maxCount, maxBytes, ttl, fin, reqs, trimmed, count, frames.
 * Returns {restarted (0|1), last seq, bytes held}.
 */
export const APPEND = new Script(`${PARSE_HEAD}
local meta, list = KEYS[1], KEYS[2]
local seq = tonumber(ARGV[1])
local maxCount, maxBytes = tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl, fin, reqs, trimmed = ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local n, body = tonumber(ARGV[8]), ARGV[9]
local m = redis.call('HMGET', meta, 'f', 'l', 'b')
if n == 0 and not m[2] and reqs == '' then return {0, 0, 0} end
local first, last, bytes = tonumber(m[1]), tonumber(m[2]) or 0, tonumber(m[3]) or 0
local reset = 0
if n > 0 and seq > last + 1 then
  redis.call('DEL', list)
  first, last, bytes = seq, seq - 1, 0
  -- A gap the sender made itself (the frames before seq were past the bounds anyway) is no loss.
  if trimmed == '' then reset = 1 end
end
-- Frames the copy already holds (a re-sent batch) are cut off, and never stored twice.
local skip = last + 1 - seq
if n > 0 and skip < n then
  local p = 1
  for _ = 1, skip do p = frameEnd(body, p) + 1 end
  if p > 1 then body = string.sub(body, p) end
  redis.call('RPUSH', list, (seq + skip) .. ' ' .. (n - skip) .. '\\n' .. body)
  bytes = bytes + #body
  if not first then first = seq + skip end
  last = seq + n - 1
end
first = first or 1
-- Trimmed frame by frame as if each were an element (the bounds and a cursor's 'evicted' are exactly
-- those of one frame per element): a head pack the bounds drop whole is popped unread; a pack they
-- cut is scanned up to the cut and pushed back shorter.
local count = last - first + 1
while count > maxCount or (bytes > maxBytes and count > 1) do
  local el = redis.call('LPOP', list)
  local s, c, at
  if el then s, c, at = head(el) end
  if not s or s ~= first or c > count then
    -- Not what the metadata says (cannot happen but by another writer): start the copy again.
    redis.call('DEL', list)
    first, bytes, count, reset = last + 1, 0, 0, 1
    break
  end
  local size = #el - at + 1
  if count - c >= maxCount or (count > c and bytes - size >= maxBytes) then
    count, bytes, first = count - c, bytes - size, first + c
  else
    local p, d = at, 0
    while d < c and (count > maxCount or (bytes > maxBytes and count > 1)) do
      local e = frameEnd(el, p)
      bytes = bytes - (e - p + 1)
      p, d, count, first = e + 1, d + 1, count - 1, first + 1
    end
    if d < c then redis.call('LPUSH', list, first .. ' ' .. (c - d) .. '\\n' .. string.sub(el, p)) end
  end
end
redis.call('HSET', meta, 'f', first, 'l', last, 'b', bytes)
if fin ~= '' then
  redis.call('HSET', meta, 'fin', 1)
  ttl = fin
end
if reqs ~= '' then redis.call('HSET', meta, 'r', reqs) end
redis.call('PEXPIRE', meta, ttl)
redis.call('PEXPIRE', list, ttl)
return {reset, last, bytes}`);

/**
 * KEYS meta, list; ARGV after. {0} no copy; {-1} evicted; {2, fin, reqs} ahead; {1, fin, reqs, last,
 * packs...}: the packs from the one holding seq after + 1 on (the reader drops the frames before it).
 */
export const REPLAY = new Script(`${PARSE_HEAD}
local m = redis.call('HMGET', KEYS[1], 'f', 'l', 'fin', 'r')
if not m[2] then return {0} end
local first, last, after = tonumber(m[1]), tonumber(m[2]), tonumber(ARGV[1])
if after > last then return {2, m[3] or '', m[4] or ''} end
if after + 1 < first then return {-1} end
local out = {1, m[3] or '', m[4] or '', last}
if after == last then return out end
local packs = redis.call('LRANGE', KEYS[2], 0, -1)
for i = 1, #packs do
  local s, c = head(packs[i])
  if not s then return {0} end
  -- Copied one by one: unpack() would meet Lua's stack limit on a long list.
  if #out > 4 or s + c - 1 > after then out[#out + 1] = packs[i] end
end
if #out == 4 then return {0} end
return out`);

/**
 * The batch's frames as one pack's frames (without its header), or undefined when splitting the
 * result at each `\n\n` would not give back exactly these frames (a frame not written by
 * sse/encode.ts): such a batch is not stored.
 */
export function packFrames(frames: readonly string[]): string | undefined {
  const body = frames.join('');
  let p = 0;
  for (const f of frames) {
    const end = body.indexOf('\n\n', p);
    p += f.length;
    if (end + 2 !== p) return undefined;
  }
  return body;
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
    const m = /^(\d+) (\d+)\n/.exec(el);
    if (m === null) return undefined;
    const first = Number(m[1]);
    const count = Number(m[2]);
    if (next === undefined ? first > afterSeq + 1 : first !== next) return undefined;
    let p = m[0].length;
    for (let k = 0; k < count; k++) {
      const end = el.indexOf('\n\n', p);
      if (end < 0) return undefined;
      if (first + k > afterSeq) out.push({ seq: first + k, frame: el.slice(p, end + 2) });
      p = end + 2;
    }
    if (p !== el.length) return undefined;
    next = first + count;
  }
  return next === last + 1 ? out : undefined;
}
