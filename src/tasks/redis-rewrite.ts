/**
 * Which of the task store's writes are kept to be sent again after a failover (cluster/recent-writes.ts),
 * and why each is safe to send twice. A write is kept only when it changed something: a refused
 * transition sent again after another instance's writes could succeed where it once failed (a
 * runner's settle refused because a cancel came first must not complete the task when the cancel is
 * sent again after it). What is kept, sent again over any later state, changes nothing the state
 * already has, and its reply says so (so that the instances stop passing once nothing changes):
 * - PROGRESS, SETTLE, CANCEL and ANSWER change the task's version and are kept with the version
 *   they applied to: sent again, each applies to that version only — never twice, never to a
 *   later state that looks like the earlier one (working, input_required, working again), and
 *   only once the steps it followed (of any instance) are back; the version they leave is in the reply;
 * - CREATE only where the task does not exist (0), OWN adds an id once (0), RENEW only lengthens
 *   the lease ({client, 0} otherwise), RETAIN counts a task once (nil), FORGET/DEL remove (0).
 * A client's live count (`sl:tasks:{C}`: RESERVE, and the ZADD/ZREM that follow a task's lease) is
 * another slot than the task, so its writes cannot see the task's state: sent again, a creation
 * would count a task another instance has finished since. They are kept but not sent again; after
 * each pass each count this instance wrote is set from its task's state instead (`liveCountsRepaired`).
 * GET and PAGE are not kept: the lapse and the trim they may write are written again by the next read.
 */
import { keys } from '../cluster/keys.js';
import { RecentWrites, type RecentWritesOptions } from '../cluster/recent-writes.js';
import type { RedisLink, RedisReply } from '../cluster/redis-link.js';
import type { Script } from '../cluster/scripts.js';
import {
  ANSWER,
  CANCEL,
  CREATE,
  FORGET,
  GET,
  OWN,
  PAGE,
  PROGRESS,
  RENEW,
  RESERVE,
  RETAIN,
  SETTLE,
} from './redis-scripts.js';

/** Every script the store sends, for a write sent again to a master that lacks its source. */
const SCRIPTS = [ANSWER, CANCEL, CREATE, FORGET, GET, OWN, PAGE, PROGRESS, RENEW, RESERVE, RETAIN, SETTLE];

/** A client's live count: `sl:tasks:{C}` (keys.clientTasks). */
const LIVE_COUNT = keys.clientTasks('').slice(0, -1);

/** Whether a write the store sent (or sent again) changed anything, from Redis's reply. */
export function taskWriteChanged(
  script: Script | undefined,
  args: readonly string[],
  reply: RedisReply,
): boolean {
  if (script === undefined) {
    if (args[1]?.startsWith(LIVE_COUNT)) return true;
    return typeof reply === 'number' ? reply > 0 : reply !== null;
  }
  if (script === GET || script === PAGE) return false;
  if (script === CREATE || script === RESERVE || script === OWN) return reply === 1;
  if (script === RENEW) return Array.isArray(reply) && typeof reply[1] === 'number' && reply[1] > 0;
  if (script === RETAIN) return Array.isArray(reply);
  if (script === FORGET) return typeof reply === 'number' && reply > 0;
  return versionOf(script, reply) !== undefined;
}

/** The version a versioned step left the task at (redis-scripts.ts), when it changed it. */
function versionOf(script: Script, reply: RedisReply): number | undefined {
  const v =
    script === PROGRESS
      ? reply
      : !Array.isArray(reply)
        ? undefined
        : script === SETTLE || script === CANCEL
          ? reply[2]
          : script === ANSWER
            ? reply[3]
            : undefined;
  return typeof v === 'number' && v > 0 ? v : undefined;
}

/**
 * What the store keeps of a write: nothing when it changed nothing; a versioned step with the
 * version it applied to after its time (`<time>:<version>`, EVALSHA's fifth argument), so that sent
 * again it applies to that version only.
 */
export function taskWriteKept(
  script: Script | undefined,
  args: readonly string[],
  reply: RedisReply,
): readonly string[] | undefined {
  if (!taskWriteChanged(script, args, reply)) return undefined;
  const v = script === undefined ? undefined : versionOf(script, reply);
  if (v === undefined) return args;
  const out = [...args];
  out[4] = `${args[4]}:${v - 1}`;
  return out;
}

/** The live counts' writes are kept for `liveCountsRepaired` to read, not sent again. */
const resent = (script: Script | undefined, args: readonly string[]): boolean =>
  script === undefined ? !args[1]?.startsWith(LIVE_COUNT) : script !== RESERVE;

const num = (v: RedisReply | undefined): number | undefined => {
  const n = typeof v === 'string' ? Number(v) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
};

/**
 * After a pass: each live count this instance wrote is set from its task, as the store sets it while
 * the task lives (store.ts: until its lease ends while one is held, else until its TTL ends), or
 * taken out when the task has finished or is gone. How many it changed.
 */
export async function liveCountsRepaired(
  writes: readonly (readonly string[])[],
  link: RedisLink,
): Promise<number> {
  const counted = new Map<string, string>();
  for (const w of writes) {
    // EVALSHA sha 1 <live count> now max <task id> …; ZADD <live count> [XX] score <task id>; ZREM <live count> <task id>.
    const [key, id] =
      w[0] === 'EVALSHA' && w[1] === RESERVE.sha
        ? [w[3], w[6]]
        : w[0] === 'ZADD'
          ? [w[1], w[w.length - 1]]
          : w[0] === 'ZREM'
            ? [w[1], w[2]]
            : [];
    if (key?.startsWith(LIVE_COUNT) && id !== undefined) counted.set(id, key);
  }
  // Each count on its own (no order between tasks): all at once, pipelined on the link.
  const changes = await Promise.all(
    [...counted].map(async ([taskId, key]) => {
      const f = await link.send(['HMGET', keys.task(taskId), 's', 'lu', 'ca', 'ttl']);
      const [s, lu, ca, ttl] = Array.isArray(f) ? f : [];
      const ends = (num(ca) ?? 0) + (num(ttl) ?? 0);
      const r =
        s === 'working' || s === 'input_required'
          ? await link.send(['ZADD', key, 'CH', String(Math.min(num(lu) ?? ends, ends)), taskId])
          : await link.send(['ZREM', key, taskId]);
      return typeof r === 'number' ? r : 0;
    }),
  );
  return changes.reduce((a, b) => a + b, 0);
}

/** The store's kept writes, on a link that can fail over. */
export function recentTaskWrites(
  options: RecentWritesOptions,
  onError: (error: unknown) => void,
): RecentWrites {
  return new RecentWrites(options, {
    scripts: SCRIPTS,
    changed: taskWriteChanged,
    keep: taskWriteKept,
    resent,
    afterPass: liveCountsRepaired,
    generationKey: keys.taskRewrites,
    onError,
  });
}
