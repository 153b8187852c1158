/**
 * Every Redis key the cluster writes, named in one place. A session's keys share the hash tag
 * `{S}` so a Redis Cluster keeps them in one slot (Lua scripts touch several of them at once).
 *
 *   sl:{S}          HASH  the session directory entry (fields in directory.ts)
 *   sl:{S}:m3:<n>   HASH  replica metadata of POST stream n: f(irst seq) l(ast seq) b(ytes) fin r(equest ids)
 *   sl:{S}:l3:<n>   LIST  replica frames of POST stream n in packs (replica-packs.ts), oldest first.
 *                         "2": the format before packs (one frame per element) was `:m:`/`:l:`; the
 *                         new names keep members of the two releases from misreading each other's
 *                         copy during a rolling upgrade
 *   sl:inst:<inc>   STRING an instance lease: the instance's advertised URL, PX = lease
 *   sl:members      ZSET  every instance by incarnation, scored with when its lease ends (ms, its
 *                         own clock): one key, so counting peers asks one node of a Redis Cluster
 *   sl:secret       STRING the cluster's shared HMAC key (when not given by SLUICE_CLUSTER_SECRET)
 *   sl:run          STRING when this Redis's data began (ms), to tell a restarted Redis from a real miss
 *   sl:bus          CHANNEL change events for listen streams (change-bus.ts), pub/sub only, no key
 *   sl:task:{T}     HASH  a task of the tasks extension (src/tasks/redis-store.ts), its own hash tag
 *   sl:tasks:{C}    ZSET  the unfinished tasks of one client (C: a hash of the client's key)
 *   sl:towner:{O}   ZSET  the tasks of one owner (O: a hash of the owner's key), scored by expiry, for tasks/list
 *   sl:tdone:{C}    ZSET  the finished tasks of one client, scored by expiry (its FinishedBounds, tasks/store.ts)
 *   sl:tbytes:{C}   HASH  their bytes, by task id, and their sum in field `#`
 *   sl:tfinished:{all} ZSET every client's finished tasks (`<task id>:<C>`), scored by expiry: the
 *                         store's bounds over all clients (RedisTaskStoreOptions.maxFinished)
 *   sl:tfbytes:{all} HASH their bytes, by member, and their sum in field `#`
 *   sl:task-cancel  CHANNEL ids of cancelled tasks, so the instance running one aborts it
 *   sl:dpop:<h>     STRING a DPoP proof id spent (h: a hash of key and jti), PX = its freshness window
 *   sl:trewrite     STRING how many passes of task writes sent again after a failover changed something
 *                          (cluster/recent-writes.ts): each instance passes again when it moves
 *   sl:trewrite:beat STRING a count each such pass raises as it goes: the others watch on meanwhile
 */
export const PREFIX = 'sl:';

export const keys = {
  session: (sid: string): string => `${PREFIX}{${sid}}`,
  streamMeta: (sid: string, stream: number): string => `${PREFIX}{${sid}}:m3:${stream}`,
  streamList: (sid: string, stream: number): string => `${PREFIX}{${sid}}:l3:${stream}`,
  lease: (incarnation: string): string => `${PREFIX}inst:${incarnation}`,
  members: `${PREFIX}members`,
  secret: `${PREFIX}secret`,
  run: `${PREFIX}run`,
  bus: `${PREFIX}bus`,
  task: (taskId: string): string => `${PREFIX}task:{${taskId}}`,
  clientTasks: (clientHash: string): string => `${PREFIX}tasks:{${clientHash}}`,
  ownerTasks: (ownerHash: string): string => `${PREFIX}towner:{${ownerHash}}`,
  clientDone: (clientHash: string): string => `${PREFIX}tdone:{${clientHash}}`,
  clientDoneBytes: (clientHash: string): string => `${PREFIX}tbytes:{${clientHash}}`,
  allDone: `${PREFIX}tfinished:{all}`,
  allDoneBytes: `${PREFIX}tfbytes:{all}`,
  taskCancel: `${PREFIX}task-cancel`,
  dpopProof: (hash: string): string => `${PREFIX}dpop:${hash}`,
  taskRewrites: `${PREFIX}trewrite`,
} as const;

/**
 * The part of a key Redis Cluster hashes to pick its slot: what lies between the first `{` and the
 * next `}` when that is not empty, else the whole key (Redis Cluster specification, "Hash tags").
 */
export function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** Whether the keys hash to one slot whatever the server: they share one hash tag. */
export function oneSlot(keyList: readonly string[]): boolean {
  const first = keyList[0];
  return first === undefined || keyList.every((k) => hashTag(k) === hashTag(first));
}
