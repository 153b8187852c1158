/**
 * The Redis task store's Lua scripts: each is one atomic step on one task's HASH (one key, so any
 * Redis Cluster slot), and each but the runner's own (RENEW, PROGRESS, SETTLE) first applies the
 * lease rule: a `working` task whose lease (`lu`) ended (or an `input_required` one that kept its
 * lease) is `failed` with OWNER_LOST before anything else is decided. The runner's steps do not:
 * it is plainly alive, and a lease lapses only when someone else reads it (store.ts TaskStore.renew).
 *
 * HASH fields: o owner, c client, s status, ca createdAt, u lastUpdatedAt, ttl, pi pollIntervalMs,
 * m statusMessage, pt/ptx partial text so far/whether cut (while working), r result, e error, rs requestState, call, ph the call's Mcp-Param-* headers,
 * lo/lu lease owner/until, lost (1: failed by a lapsed lease and not yet counted as finished, 2: counted), and one field
 * per pending input request (`i:<key>`) and per answer received (`a:<key>`): a partial
 * `tasks/update` is HDEL + HSET, no JSON is decoded in Lua (cjson would turn `[]` into `{}`); v the
 * task's version, 1 at creation and one more with each change but a renewal (a lapse included).
 *
 * ARGV[1] is the time of the step (`u`, the lease rule), or `<time>:<version>` for a step sent
 * again after a failover (redis-rewrite.ts): it applies only to the version it first applied to,
 * so it can neither apply twice nor to a later state that looks like the earlier one (a task that
 * went from working to input_required and back).
 */
import { Script } from '../cluster/scripts.js';
import { OWNER_LOST } from './model.js';

// JSON.stringify of an ASCII string is a valid Lua string literal.
const PRELUDE = `
local k = KEYS[1]
local at = string.match(ARGV[1], '^[^:]*')
local now = tonumber(at)
local want = string.match(ARGV[1], ':(%d+)$')
-- A step sent again applies only to the version it first applied to.
local function behind()
  return want ~= nil and tonumber(redis.call('HGET', k, 'v') or '0') ~= tonumber(want)
end
local function bump()
  return redis.call('HINCRBY', k, 'v', 1)
end
local function lapse()
  local s = redis.call('HGET', k, 's')
  local lu = (s == 'working' or s == 'input_required') and redis.call('HGET', k, 'lu')
  -- input_required holds a lease only while its runner goes on running (a 2025 task waiting for
  -- the client); a working task without one has lapsed.
  if s == 'working' or lu then
    if tonumber(lu or '0') < now then
      -- lost = 1: failed here, not yet counted as finished (GET counts it, once: lost = 2).
      redis.call('HSET', k, 's', 'failed', 'e', ${JSON.stringify(JSON.stringify(OWNER_LOST))}, 'u', at, 'lost', '1')
      redis.call('HDEL', k, 'lo', 'lu')
      bump()
      return 'failed'
    end
  end
  return s
end
local function clearInputs()
  for _, f in ipairs(redis.call('HKEYS', k)) do
    local p = string.sub(f, 1, 2)
    if p == 'i:' or p == 'a:' then redis.call('HDEL', k, f) end
  end
end
local function mine(owner)
  return redis.call('HGET', k, 'o') == owner
end
`;

/** ARGV: now, ttlMs, then field/value pairs. 1 = created (version 1), 0 = the id exists. */
export const CREATE = new Script(`${PRELUDE}
if redis.call('EXISTS', k) == 1 then return 0 end
redis.call('HSET', k, 'v', '1', unpack(ARGV, 3))
redis.call('PEXPIRE', k, ARGV[2])
return 1
`);

/** On the client's ZSET. ARGV: now, max, taskId, score (when it stops counting), ttlMs. 1 = reserved. */
export const RESERVE = new Script(`${PRELUDE}
redis.call('ZREMRANGEBYSCORE', k, '-inf', ARGV[1])
if redis.call('ZCARD', k) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', k, ARGV[4], ARGV[3])
if redis.call('PTTL', k) < tonumber(ARGV[5]) then redis.call('PEXPIRE', k, ARGV[5]) end
return 1
`);

/**
 * ARGV: now, owner. {1 when this read is the first since a lapsed lease failed the task (the store
 * then counts it as finished, once), the HGETALL}; nil when unknown or another owner's.
 */
export const GET = new Script(`${PRELUDE}
if redis.call('EXISTS', k) == 0 or not mine(ARGV[2]) then return nil end
lapse()
local first = 0
if redis.call('HGET', k, 'lost') == '1' then
  redis.call('HSET', k, 'lost', '2')
  first = 1
end
return {first, redis.call('HGETALL', k)}
`);

/**
 * ARGV: now, runner, leaseUntil. {client, 1} renewed, {client, 2} renewed after its end (a late
 * renewal no read preceded: nothing lapsed it, store.ts TaskStore.renew), {client, 0} when the
 * lease already ends later (held, unchanged), or 0 (not held). The lease only grows: a renewal
 * sent again after a failover (redis-rewrite.ts) must not shorten a later one.
 */
export const RENEW = new Script(`${PRELUDE}
if redis.call('EXISTS', k) == 0 then return 0 end
local s = redis.call('HGET', k, 's')
if (s ~= 'working' and s ~= 'input_required') or redis.call('HGET', k, 'lo') ~= ARGV[2] then return 0 end
local c = redis.call('HGET', k, 'c')
local lu = tonumber(redis.call('HGET', k, 'lu') or '0')
if lu >= tonumber(ARGV[3]) then return {c, 0} end
redis.call('HSET', k, 'lu', ARGV[3])
if lu < now then return {c, 2} end
return {c, 1}
`);

/** ARGV: now, runner, then field/value pairs (m message, pt partial text, ptx cut). The new version, or 0 = refused. */
export const PROGRESS = new Script(`${PRELUDE}
if redis.call('EXISTS', k) == 0 or behind() then return 0 end
if redis.call('HGET', k, 's') ~= 'working' or redis.call('HGET', k, 'lo') ~= ARGV[2] then return 0 end
redis.call('HSET', k, 'u', at, unpack(ARGV, 3))
return bump()
`);

/**
 * ARGV: now, runner, status, then field/value pairs (lo/lu among them when an input_required runner
 * keeps its lease). {client, createdAt + ttl, the new version} (settled), or 0.
 */
export const SETTLE = new Script(`${PRELUDE}
if redis.call('EXISTS', k) == 0 or behind() then return 0 end
if redis.call('HGET', k, 's') ~= 'working' or redis.call('HGET', k, 'lo') ~= ARGV[2] then return 0 end
clearInputs()
redis.call('HDEL', k, 'lo', 'lu', 'rs', 'pt', 'ptx')
-- A finished task has no later round: its call text (read only for the next round) is let go.
if ARGV[3] == 'completed' or ARGV[3] == 'failed' then redis.call('HSET', k, 'call', '') end
redis.call('HSET', k, 's', ARGV[3], 'u', at, unpack(ARGV, 4))
local ends = tonumber(redis.call('HGET', k, 'ca')) + tonumber(redis.call('HGET', k, 'ttl'))
return {redis.call('HGET', k, 'c'), tostring(ends), bump()}
`);

/**
 * ARGV: now, owner, [statusMessage]. {changed, HGETALL, the new version when changed}, or nil when
 * unknown or another owner's. What
 * only a running task has goes (the last progress message unless the cancel gives one, the partial
 * text, the next round's state): the outcome does not depend on what the runner wrote just before,
 * so the writes sent again after a failover (redis-rewrite.ts) end alike in either order.
 */
export const CANCEL = new Script(`${PRELUDE}
if redis.call('EXISTS', k) == 0 or not mine(ARGV[2]) then return nil end
if behind() then return {0, redis.call('HGETALL', k), 0} end
local s = lapse()
if s == 'working' or s == 'input_required' then
  clearInputs()
  redis.call('HDEL', k, 'lo', 'lu', 'rs', 'pt', 'ptx', 'm')
  redis.call('HSET', k, 's', 'cancelled', 'u', at)
  if ARGV[3] then redis.call('HSET', k, 'm', ARGV[3]) end
  local v = bump()
  return {1, redis.call('HGETALL', k), v}
end
return {0, redis.call('HGETALL', k), 0}
`);

/**
 * ARGV: now, owner, runner, leaseUntil, then key/answer pairs. {resume, HGETALL, 1 when an answer was
 * stored, the new version when it changed}, or nil. An answer to no open question changes nothing
 * while others are open.
 */
export const ANSWER = new Script(`${PRELUDE}
if redis.call('EXISTS', k) == 0 or not mine(ARGV[2]) then return nil end
if behind() or lapse() ~= 'input_required' then return {0, redis.call('HGETALL', k), 0, 0} end
local stored = 0
for i = 5, #ARGV, 2 do
  if redis.call('HEXISTS', k, 'i:' .. ARGV[i]) == 1 then
    redis.call('HDEL', k, 'i:' .. ARGV[i])
    redis.call('HSET', k, 'a:' .. ARGV[i], ARGV[i + 1])
    stored = 1
  end
end
local open = false
for _, f in ipairs(redis.call('HKEYS', k)) do
  if string.sub(f, 1, 2) == 'i:' then open = true end
end
if open and stored == 0 then return {0, redis.call('HGETALL', k), 0, 0} end
redis.call('HSET', k, 'u', at)
if not open then redis.call('HSET', k, 's', 'working', 'lo', ARGV[3], 'lu', ARGV[4]) end
local v = bump()
return {open and 0 or 1, redis.call('HGETALL', k), stored, v}
`);

/**
 * On an owner's ZSET of task ids, scored by when each expires (createdAt + ttl): drops the expired
 * ones and adds one (NX: an id already listed keeps its score). ARGV: now, taskId, expiresAt,
 * ttlMs. 1 when it added the id.
 */
export const OWN = new Script(`${PRELUDE}
redis.call('ZREMRANGEBYSCORE', k, '-inf', ARGV[1])
local added = redis.call('ZADD', k, 'NX', ARGV[3], ARGV[2])
if redis.call('PTTL', k) < tonumber(ARGV[4]) then redis.call('PEXPIRE', k, ARGV[4]) end
return added
`);

/**
 * A page of an owner's ZSET after the cursor (a member; '' for the first page), expired ones
 * dropped first. ARGV: now, cursor, limit. The ids, or 0 when the cursor is not a member.
 */
export const PAGE = new Script(`${PRELUDE}
redis.call('ZREMRANGEBYSCORE', k, '-inf', ARGV[1])
local start = 0
if ARGV[2] ~= '' then
  local r = redis.call('ZRANK', k, ARGV[2])
  if not r then return 0 end
  start = r + 1
end
return redis.call('ZRANGE', k, start, start + tonumber(ARGV[3]))
`);

/**
 * On a client's finished tasks (KEYS: its tdone ZSET and tbytes HASH, one hash tag): drops those
 * whose TTL passed, adds one (a task already counted is left as it is), then while the client is
 * over either bound (FinishedBounds, store.ts) takes the one that expires first, never the last
 * one left. ARGV: now, taskId, expiresAt, bytes, maxCount, maxBytes. The ids taken, whose HASHes
 * the caller deletes (another slot); nil when the task was counted already.
 */
export const RETAIN = new Script(`
local done, sizes = KEYS[1], KEYS[2]
local function forget(id)
  local b = tonumber(redis.call('HGET', sizes, id) or '0')
  redis.call('HDEL', sizes, id)
  return redis.call('HINCRBY', sizes, '#', -b)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', done, '-inf', ARGV[1])) do forget(id) end
redis.call('ZREMRANGEBYSCORE', done, '-inf', ARGV[1])
-- Already counted: nil (nothing changed), where a count returns the ids it took (maybe none).
if redis.call('ZSCORE', done, ARGV[2]) then return false end
redis.call('ZADD', done, ARGV[3], ARGV[2])
redis.call('HSET', sizes, ARGV[2], ARGV[4])
local total = redis.call('HINCRBY', sizes, '#', ARGV[4])
local maxCount, maxBytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local taken = {}
while redis.call('ZCARD', done) > 1 and (redis.call('ZCARD', done) > maxCount or total > maxBytes) do
  local id = redis.call('ZPOPMIN', done)[1]
  total = forget(id)
  taken[#taken + 1] = id
end
-- Both keys live as long as the last task they count.
local last = redis.call('ZRANGE', done, -1, -1, 'WITHSCORES')
local ttl = math.ceil(tonumber(last[2]) - tonumber(ARGV[1]))
if ttl > 0 then
  redis.call('PEXPIRE', done, ttl)
  redis.call('PEXPIRE', sizes, ttl)
end
return taken
`);

/**
 * Forgets members of a RETAIN pair of keys (KEYS[1] the ZSET, KEYS[2] the sizes): tasks dropped by the
 * other bound (a client's, or all clients'), so neither counts a task that is gone. How many it forgot.
 */
export const FORGET = new Script(`
local done, sizes = KEYS[1], KEYS[2]
local n = 0
for _, m in ipairs(ARGV) do
  if redis.call('ZREM', done, m) == 1 then
    local b = tonumber(redis.call('HGET', sizes, m) or '0')
    redis.call('HDEL', sizes, m)
    redis.call('HINCRBY', sizes, '#', -b)
    n = n + 1
  end
end
return n
`);
