/**
 * The result discriminator of the 2026-07-28 era. Every result of that era carries `resultType`, and a client MUST
 * take a result without one as `"complete"` (MCP 2026-07-28 basic/patterns/mrtr, SEP-2322: only `input_required`
 * asks for another round). SDK v2 (2.4.0) instead rejects a modern result that lacks it, so the transport fills the
 * default in before the Client sees the response: a server that omits it then works with every Client.
 */

/** Adds `resultType: "complete"` to a modern request's result that has no `resultType`; anything else is untouched. */
export function defaultResultType(result: unknown): void {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return;
  if (!('resultType' in result)) (result as Record<string, unknown>)['resultType'] = 'complete';
}
