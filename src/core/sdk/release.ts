/**
 * What Sluice does with a server it built for one request (a 2026-07-28 request's, a stateless-mode
 * request's) once it has closed it: it empties the Protocol's request and notification handler
 * tables.
 *
 * Why: under load V8 pretenures allocation sites whose objects keep surviving scavenges, and a
 * server per request built with `registerTool` ends up with objects in the old generation that,
 * dead, keep its handler tables reachable; the handlers' closures reach the whole server, so every
 * scavenge until the next full collection kept it alive and promoted it: 8.5–9.2 KB per call, and
 * scavenges more than a third of the call's CPU (docs/benchmarks.md, "A closed server per request
 * lets go of its tables"). Emptying the handler tables alone takes that to 0.5 KB. Emptying the
 * tool, prompt and resource tables as well, or cutting every registration record's fields, changed
 * nothing measurable (both measured), so neither is done: this runs once per request.
 *
 * A server that was released cannot serve again: `createServer` must return a fresh server per call
 * (or be wrapped in `statelessSafe` to share one), and `assertDrivable` refuses a released one.
 * Only `Map` fields of the SDK's known names are touched.
 */

const released = new WeakSet<object>();

/** The Protocol's handler tables (Maps of method → handler closure). */
const HANDLERS = ['_requestHandlers', '_notificationHandlers'] as const;

/** Empties a closed server's handler tables (see above). Call it only after its `close()` has resolved. */
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
}

/**
 * Closes a server Sluice served, then (with `release`) empties its handler tables as above;
 * `failed` gets what a rejected close threw.
 */
export function closeServed(
  server: { close(): Promise<void> },
  release: boolean,
  failed: (error: unknown) => void,
): void {
  server
    .close()
    .then(() => {
      if (release) releaseClosed(server);
    })
    .catch(failed);
}

/** Whether Sluice has released `server` (it served a request and was closed). */
export function wasReleased(server: object): boolean {
  return released.has(server);
}
