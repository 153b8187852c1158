/**
 * Which of the server's tools can make a stream the doctor can judge: `reindex` (progress over
 * time) or `sleep` (silence, then a result). Arguments are filled from the tool's input schema so
 * the doctor works with any server that has tools of those names, not only Sluice's demo.
 */
import { boundedWait } from '../flow/bounded-wait.js';
import type { Exchange } from './http.js';
import type { McpSession } from './session.js';

export interface ToolInfo {
  name: string;
  properties: Record<string, { type?: unknown }>;
  required: string[];
}

export async function listTools(s: McpSession): Promise<ToolInfo[]> {
  try {
    const { result } = await s.call('tools/list');
    const tools = (result as { tools?: unknown } | undefined)?.tools;
    if (!Array.isArray(tools)) return [];
    return tools.flatMap((t: unknown) => {
      if (typeof t !== 'object' || t === null) return [];
      const o = t as { name?: unknown; inputSchema?: { properties?: unknown; required?: unknown } };
      if (typeof o.name !== 'string') return [];
      const props = o.inputSchema?.properties;
      const req = o.inputSchema?.required;
      return [
        {
          name: o.name,
          properties: typeof props === 'object' && props !== null ? (props as ToolInfo['properties']) : {},
          required: Array.isArray(req) ? req.filter((r): r is string => typeof r === 'string') : [],
        },
      ];
    });
  } catch {
    // No tools/list (or it failed): the doctor falls back to the GET stream.
    return [];
  }
}

/** Arguments for a tool: delays and durations get `ms`, counts get `count`, strings a label. */
export function argumentsFor(
  t: ToolInfo,
  ms: number,
  count: number,
  text = 'sluice-doctor',
): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(t.properties)) {
    const type = schema.type;
    if (type === 'number' || type === 'integer') {
      args[name] = /ms$|delay|millis|duration|interval|wait/i.test(name) ? ms : count;
    } else if (type === 'string') {
      args[name] = text;
    } else if (type === 'boolean') {
      args[name] = false;
    } else if (t.required.includes(name)) {
      args[name] = count;
    }
  }
  return args;
}

/**
 * Calls `name` with a progress token and waits for its answer to end, at most `capMs` (the cap's timer is cleared
 * once the call is done: left pending, it kept the process alive), then stops reading. The exchange and its id.
 */
export async function callToEnd(
  s: McpSession,
  name: string,
  args: Record<string, unknown>,
  capMs: number,
): Promise<{ x: Exchange; id: number }> {
  const id = s.nextId();
  const x = await s.request(
    'tools/call',
    { name, arguments: args, _meta: { progressToken: `doctor-${id}` } },
    id,
  );
  await boundedWait(x.done, capMs);
  x.cancel();
  return { x, id };
}
