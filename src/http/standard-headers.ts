/**
 * What the 2026-07-28 revision's standard headers mirror, spelled once for the server (which
 * checks them: modern/validate.ts) and the client (which sends them: client/modern.ts). Here, not
 * in modern/, because the client ships to browsers and reaches only the building blocks.
 */

/** The first modern revision: an `MCP-Protocol-Version` at or above it never selects the legacy era. */
export const FIRST_MODERN_VERSION = '2026-07-28';

/**
 * Requests whose `params.name` (or `params.uri`, or `params.taskId`) is mirrored in the `Mcp-Name`
 * header: SEP-2243 §"Standard Headers", extended to the tasks extension's methods by SEP-2663
 * §"Streamable HTTP: Routing Headers".
 */
export const NAMED_METHODS: Readonly<Record<string, 'name' | 'uri' | 'taskId'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};
