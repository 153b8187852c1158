/**
 * The Lua side of a stream's Redis copy: APPEND (a batch's packs, idempotent, order-checked, trimmed
 * to the bounds) and REPLAY. The pack format is replica-packs.ts's; the scripts read a pack's header
 * and scan inside one only to drop some of its frames (a cut inside the head pack, or the frames of
 * a re-sent batch the copy already holds). Every byte count here is of the frames as written to the
 * socket (UTF-8), as the sender's header counts them, so the bounds are those of one frame per
 * element exactly.
 */
import { Script } from './scripts.js';

/**
 * Shared Lua: `head(el)` parses a pack's header; `walk(el)` gives its frames' bytes in turn and what
 * is left of it. A progress pack (P) holds per event one line of its values' JSON texts,
 * tab-separated; a regular run (R) holds one line per value column (`=` and the text every event
 * has, or `+` and an integer start and step: event k's value is start + k × step, written as JSON
 * writes an integer, which '%.0f' matches below 2^53). A progress frame's bytes are the constant
 * part (13 bytes of `id: `, `\ndata: ` and the blank line, the id prefix and the text pieces), the
 * seq's base-36 digits and the values'.
 */
const PACK_LUA = `
local function head(el)
  local s, c, b, kind, at = string.match(el, '^(%d+) (%d+) (%d+) ([FPR])\\n()')
  if not s then return nil end
  return tonumber(s), tonumber(c), tonumber(b), kind, at
end
local function digits36(n)
  local d = 1
  while n >= 36 do n = math.floor(n / 36); d = d + 1 end
  return d
end
local function int(x)
  return string.format('%.0f', x)
end
-- A walk over the frames of pack el from its first: returns next(), giving each frame's bytes in
-- turn, and rest(), the pack without the frames walked so far (nil when none is left).
local function walk(el)
  local s, c, b, kind, at = head(el)
  local p, k, pre, fixed, tabs = at, 0, '', 0, 0
  -- R: per column, the constant text's bytes (cbytes) or the start and step (start, step).
  local cols, colsAt, cbytes, start, step = 0, 0, {}, {}, {}
  if kind ~= 'F' then
    local pf, q0, q1, q2, q3, nv, from = string.match(el,
      '^([^\\n]*)\\n([^\\n]*)\\n([^\\n]*)\\n([^\\n]*)\\n([^\\n]*)\\n(%d)\\n()', at)
    fixed = 13 + #pf + #q0 + #q1 + #q2 + #q3
    nv = tonumber(nv)
    if nv > 0 then tabs = nv - 1 end
    pre, p = string.sub(el, at, from - 1), from
    if kind == 'R' then
      cols, colsAt = nv, p
      for i = 1, nv do
        local tag, text, nextAt = string.match(el, '^([=+])([^\\n]*)\\n()', p)
        if tag == '=' then
          cbytes[i] = #text
        else
          local a0, d = string.match(text, '^(%-?%d+) (%-?%d+)$')
          start[i], step[i] = tonumber(a0), tonumber(d)
        end
        p = nextAt
      end
    end
  end
  local used = 0
  local function nextFrame()
    local size
    if kind == 'F' then
      local e = string.find(el, '\\n\\n', p, true)
      size = e + 2 - p
      p = e + 2
    elseif kind == 'P' then
      local e = string.find(el, '\\n', p, true)
      size = fixed + digits36(s + k) + (e - p) - tabs
      p = e + 1
    else
      size = fixed + digits36(s + k)
      for i = 1, cols do
        size = size + (cbytes[i] or #int(start[i] + k * step[i]))
      end
    end
    k = k + 1
    used = used + size
    return size
  end
  local function rest()
    if k >= c then return nil end
    local body
    if kind ~= 'R' then
      body = string.sub(el, p)
    else
      local lines, q = {}, colsAt
      for i = 1, cols do
        local e = string.find(el, '\\n', q, true)
        if cbytes[i] then
          lines[i] = string.sub(el, q, e)
        else
          lines[i] = '+' .. int(start[i] + k * step[i]) .. ' ' .. int(step[i]) .. '\\n'
        end
        q = e + 1
      end
      body = table.concat(lines)
    end
    return (s + k) .. ' ' .. (c - k) .. ' ' .. (b - used) .. ' ' .. kind .. '\\n' .. pre .. body
  end
  return nextFrame, rest
end`;

/**
 * KEYS meta, list; ARGV seq, maxCount, maxBytes, ttl, fin, reqs, trimmed, frame count, packs...
 * (the batch's frames from seq on, in order). `trimmed`: '1' when the sender left out frames the
 * bounds would drop at once, 'replace' when the frames replace the copy's (a rewrite after a
 * failover). Returns {restarted (0|1), last seq, bytes held}.
 */
export const APPEND = new Script(`${PACK_LUA}
local meta, list = KEYS[1], KEYS[2]
local seq = tonumber(ARGV[1])
local maxCount, maxBytes = tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl, fin, reqs, trimmed = ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local n = tonumber(ARGV[8])
local m = redis.call('HMGET', meta, 'f', 'l', 'b')
if n == 0 and not m[2] and reqs == '' then return {0, 0, 0} end
local first, last, bytes = tonumber(m[1]), tonumber(m[2]) or 0, tonumber(m[3]) or 0
local reset = 0
if trimmed == 'replace' then
  -- Written again after a failover (replica.ts rewrite): the batch is the owner's whole buffer.
  redis.call('DEL', list)
  first, last, bytes = nil, seq - 1, 0
elseif n > 0 and seq > last + 1 then
  redis.call('DEL', list)
  first, last, bytes = seq, seq - 1, 0
  -- A gap the sender made itself (the frames before seq were past the bounds anyway) is no loss.
  if trimmed == '' then reset = 1 end
end
for i = 9, #ARGV do
  local el = ARGV[i]
  local s, c = head(el)
  -- Frames the copy already holds (a re-sent batch) are cut off, never stored twice.
  if s + c - 1 > last then
    if s <= last then
      local nextFrame, rest = walk(el)
      for _ = s, last do nextFrame() end
      el = rest()
      s = last + 1
    end
    local _, c2, b2 = head(el)
    redis.call('RPUSH', list, el)
    bytes = bytes + b2
    if not first then first = s end
    last = s + c2 - 1
  end
end
first = first or 1
-- Trimmed as if each frame were an element (the bounds and a cursor's 'evicted' are exactly those
-- of one frame per element): a head pack the bounds drop whole is popped unread; one they cut is
-- walked up to the cut and pushed back shorter.
local count = last - first + 1
while count > maxCount or (bytes > maxBytes and count > 1) do
  local el = redis.call('LPOP', list)
  local s, c, b
  if el then s, c, b = head(el) end
  if not s or s ~= first or c > count then
    -- Not what the metadata says (cannot happen but by another writer): start the copy again.
    redis.call('DEL', list)
    first, bytes, count, reset = last + 1, 0, 0, 1
    break
  end
  if count - c >= maxCount or (count > c and bytes - b >= maxBytes) then
    count, bytes, first = count - c, bytes - b, first + c
  else
    local nextFrame, rest = walk(el)
    local k = 0
    while k < c and (count > maxCount or (bytes > maxBytes and count > 1)) do
      bytes = bytes - nextFrame()
      count, first, k = count - 1, first + 1, k + 1
    end
    local left = rest()
    if left then redis.call('LPUSH', list, left) end
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
export const REPLAY = new Script(`${PACK_LUA}
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
