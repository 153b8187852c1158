/**
 * What Sluice does with a server it built for one request (a 2026-07-28 request's, a stateless-mode
 * request's) once it has closed it: it empties the server's handler tables and its tool, prompt and
 * resource tables.
 *
 * Why: each `registerTool`/`registerPrompt`/`registerResource` record the SDK makes is an object
 * literal with four closures over its `McpServer`. Under load V8 pretenures that allocation site
 * (its objects keep surviving scavenges), so every new record is allocated in the old generation;
 * dead there, it keeps what its closures reach, the server and everything the server reaches,
 * alive through every scavenge until the next full collection, and all of it is promoted. A server
 * per request built with `registerTool` promoted 8.8–10 KB per call, and scavenges cost more than
 * a third of its CPU (docs/benchmarks.md, "A closed server per request lets go of its tables").
 * With the tables emptied, a dead record reaches the `McpServer` object and little else.
 *
 * A server that was released cannot serve again: `createServer` must return a fresh server per call
 * (or be wrapped in `statelessSafe` to share one), and `assertDrivable` refuses a released one.
 * Only fields of the shape SDK 1.32 (and SDK v2's `McpServer`) has are touched.
 */

const released = new WeakSet<object>();

/** The McpServer's registration tables (plain objects keyed by name or URI). */
const TABLES = [
  '_registeredTools',
  '_registeredPrompts',
  '_registeredResources',
  '_registeredResourceTemplates',
] as const;
/** The Protocol's handler tables (Maps of method → handler closure). */
const HANDLERS = ['_requestHandlers', '_notificationHandlers'] as const;

/** Empties a closed server's tables (see above). Call it only after its `close()` has resolved. */
export function releaseClosed(server: object): void {
  const outer = server as Record<string, unknown>;
  const wrapped = outer['server'];
  // An McpServer wraps the low-level Server (which extends Protocol) as `.server`.
  const inner =
    typeof wrapped === 'object' && wrapped !== null ? (wrapped as Record<string, unknown>) : outer;
  // Connected again already (a createServer that hands one server out twice): it is serving.
  if (inner['transport'] !== undefined) return;
  released.add(server);
  for (const k of HANDLERS) {
    const table = inner[k];
    if (table instanceof Map) table.clear();
  }
  if (inner === outer) return;
  for (const k of TABLES) {
    const table = outer[k];
    if (typeof table !== 'object' || table === null || Object.getPrototypeOf(table) !== Object.prototype)
      continue;
    // The records themselves are the pretenured objects: each one's fields (its schemas, handler
    // and closures) are cut too. A shared record (registerSharedTools and the like) is frozen and
    // serves other servers: it is left alone.
    for (const record of Object.values(table)) {
      if (typeof record !== 'object' || record === null || Object.isFrozen(record)) continue;
      for (const field of Object.keys(record)) (record as Record<string, unknown>)[field] = undefined;
    }
    outer[k] = {};
  }
}

/** Whether Sluice has released `server` (it served a request and was closed). */
export function wasReleased(server: object): boolean {
  return released.has(server);
}
