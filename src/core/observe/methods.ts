/**
 * The request methods MCP defines: only these get their own metric label, anything a client
 * invents counts as 'other' (bounded label cardinality, whatever a client sends).
 */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
]);

/** Whether `method` is a client-to-server request MCP (2025-11-25) defines. */
export function isMcpRequestMethod(method: string): boolean {
  return KNOWN_METHODS.has(method);
}

export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'other';
}
