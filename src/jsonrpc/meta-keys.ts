/**
 * Every `_meta` key Sluice reads or writes, spelled once (MCP basic/index §"_meta": a key's prefix
 * names who owns it; `io.modelcontextprotocol/` is the protocol's own).
 *
 * Sluice's own keys sit under two prefixes, and both are wire contract: `io.sluice/` for what
 * Sluice added to the session-era protocol (partial-output frames, the client's idempotency key;
 * documented in docs/partial-results.md and docs/client.md) and `dev.sluice/` for the 2026-07-28
 * era's extensions (named tool errors, multi-round-trip inputs and state; docs/dual-era.md).
 * Clients and servers in the field send and read them as they are, so neither is renamed.
 */

/** The revision a 2026-07-28-or-later request is sent under (MCP 2026-07-28 basic/index §"_meta"). */
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
/** The 2026-07-28 per-request capability declaration (also the draft partial-results SEP's echo). */
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

/** Marks a notification as one frame of partial output (jsonrpc/partial.ts). */
export const PARTIAL_META_KEY = 'io.sluice/partial';
/** Marks a request as safe to re-send: `"io.sluice/idempotencyKey": "<non-empty string>"` (the client). */
export const IDEMPOTENCY_KEY_META = 'io.sluice/idempotencyKey';

/** Names a tool's error result, answered as a JSON-RPC error on a 2026-07-28 request (modern/tool-error.ts). */
export const META_TOOL_ERROR = 'dev.sluice/error';
/**
 * A running task's partial output so far in `tasks/get` (tasks/model.ts): `{ text, truncated }`, the
 * text its tool sent through partialResults, bounded by `tasks.maxPartialBytes`.
 */
export const META_TASK_PARTIAL = 'dev.sluice/partialOutput';
/** The client's answers to an `input_required` result (modern/mrtr.ts). */
export const META_INPUT_RESPONSES = 'dev.sluice/inputResponses';
/** The integrity-protected request state an `input_required` result carries (modern/mrtr.ts). */
export const META_REQUEST_STATE = 'dev.sluice/requestState';

/**
 * Ties a message to a 2025-11-25 task (basic/utilities/tasks §"Associating Task-Related Messages"):
 * `{ taskId }`, on the task's requests and notifications to the client and on `tasks/result`.
 */
export const META_RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** The tasks extension's identifier (SEP-2663), declared in clientCapabilities.extensions. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
