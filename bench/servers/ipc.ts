// Messages between the orchestrator and a server child over the fork() IPC channel. The side
// channel carries the child's own accounting (process.cpuUsage() in µs, memoryUsage after a
// forced GC) so that no extra route has to be added to the server under test.

/** Memory figures of a child, in bytes (a subset of `process.memoryUsage()`). */
export interface MemorySnapshot {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /**
   * V8's young generation as committed now (new space, physical size): it grows with the bytes that
   * survive scavenges, so opening many long-lived sessions grows it, and a forced GC empties it
   * without giving the pages back. Part of `rss` that no session retains.
   */
  young: number;
}

/** Orchestrator → child. */
export type ParentMessage = { type: 'stats'; id: number } | { type: 'gc'; id: number } | { type: 'exit' };

/** Child → orchestrator. `gc` requests are answered with a `stats` message taken after GC. */
export type ChildMessage =
  | { type: 'ready'; url: string }
  | { type: 'failed'; message: string }
  | { type: 'stats'; id: number; cpuUs: number; mem: MemorySnapshot; gc: boolean };

/** Every field a message may carry, for checking an untrusted value. */
interface Loose {
  type?: unknown;
  id?: unknown;
  url?: unknown;
  message?: unknown;
  cpuUs?: unknown;
  mem?: unknown;
}

function isObject(v: unknown): v is Loose {
  return typeof v === 'object' && v !== null;
}

export function isParentMessage(v: unknown): v is ParentMessage {
  if (!isObject(v)) return false;
  const type = v.type;
  if (type === 'exit') return true;
  return (type === 'stats' || type === 'gc') && typeof v.id === 'number';
}

export function isChildMessage(v: unknown): v is ChildMessage {
  if (!isObject(v)) return false;
  switch (v.type) {
    case 'ready':
      return typeof v.url === 'string';
    case 'failed':
      return typeof v.message === 'string';
    case 'stats':
      return typeof v.id === 'number' && typeof v.cpuUs === 'number' && isObject(v.mem);
    default:
      return false;
  }
}
