/**
 * The task policy a tool declares itself: `execution.taskSupport` in its `tools/list` entry
 * ('forbidden' | 'optional' | 'required'; absent means forbidden: MCP 2025-11-25 server/tools
 * "Tool", kept by SEP-2663). Used for tools `createTasks({ tools })` does not name (explicit
 * configuration wins). The list is read through the era like any request (`TaskOffer.serve`), once
 * per principal and `LIST_TTL_MS`, a bounded number of pages each with a deadline, and the answer
 * is shared by the calls that wait for it; a failed read is not kept (the next call reads again).
 */
import type { TaskOffer } from '../core/era-2026/task-hook.js';
import { BoundedMap } from '../flow/bounded-map.js';
import { isPlainObject } from '../jsonrpc/message.js';
import { CaptureSink } from './capture-sink.js';
import type { TaskPolicy } from './options.js';

/** How long one read of a principal's tool list is used. */
export const LIST_TTL_MS = 30_000;
/** Pages of `tools/list` read at most (a server paging forever is not followed further). */
const MAX_PAGES = 20;
/** Principals whose lists are kept (oldest dropped first). */
const MAX_ENTRIES = 256;
const MAX_LIST_BYTES = 4 * 1024 * 1024;
/** A page not answered within this is a failed read (the call goes on as `forbidden`). */
const PAGE_DEADLINE_MS = 5_000;

const POLICIES: ReadonlySet<string> = new Set(['forbidden', 'optional', 'required']);

interface Entry {
  at: number;
  tools: Promise<ReadonlyMap<string, TaskPolicy>>;
}

export class ListedPolicies {
  readonly #now: () => number;
  /** Order of the last read: a principal read again becomes the newest (flow/bounded-map.ts says why not a Map). */
  readonly #entries = new BoundedMap<string, Entry>(MAX_ENTRIES);

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The tool's declared policy for this caller, or forbidden (also when the list cannot be read). */
  async policy(tool: string, owner: string, o: TaskOffer): Promise<TaskPolicy> {
    let e = this.#entries.get(owner);
    const now = this.#now();
    if (e === undefined || now - e.at > LIST_TTL_MS) {
      const entry: Entry = {
        at: now,
        tools: read(o).then((r) => {
          if (!r.ok && this.#entries.get(owner) === entry) this.#entries.delete(owner);
          return r.tools;
        }),
      };
      e = entry;
      this.#entries.renew(owner, e);
    }
    return (await e.tools).get(tool) ?? 'forbidden';
  }
}

/** Reads the tool list through the era; a failed read lists nothing (every tool forbidden). */
async function read(o: TaskOffer): Promise<{ tools: ReadonlyMap<string, TaskPolicy>; ok: boolean }> {
  const out = new Map<string, TaskPolicy>();
  const failed = { tools: out, ok: false };
  const meta = o.req.params?.['_meta'];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const params: Record<string, unknown> = isPlainObject(meta) ? { _meta: meta } : {};
    if (cursor !== undefined) params['cursor'] = cursor;
    const sink = new CaptureSink(MAX_LIST_BYTES, () => undefined);
    const timer = setTimeout(() => sink.abort(), PAGE_DEADLINE_MS);
    o.serve({ jsonrpc: '2.0', id: `sluice-tasks-list:${page}`, method: 'tools/list', params }, sink).catch(
      () => sink.abort(),
    );
    const c = await sink.done;
    clearTimeout(timer);
    const result = c.kind === 'response' ? c.message['result'] : undefined;
    if (!isPlainObject(result) || !Array.isArray(result['tools'])) return failed;
    for (const t of result['tools']) {
      if (!isPlainObject(t) || typeof t['name'] !== 'string') continue;
      const ts = isPlainObject(t['execution']) ? t['execution']['taskSupport'] : undefined;
      if (typeof ts === 'string' && POLICIES.has(ts)) out.set(t['name'], ts as TaskPolicy);
    }
    const next = result['nextCursor'];
    if (typeof next !== 'string' || next === '') return { tools: out, ok: true };
    cursor = next;
  }
  return { tools: out, ok: true };
}
