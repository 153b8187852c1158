/**
 * The import direction of docs/design.md, checked on the source: building blocks import only each
 * other; the core adds nothing but building blocks and no node:* at all (not even as a type, so no
 * runtime's object reaches RequestView); the server binding sits on the core; the fetch binding
 * imports nothing of the server binding; the client reaches only the browser-safe building blocks
 * and keeps node:* in its Node adapter; nothing below the CLI imports the CLI, the doctor or the
 * demo. Inside the core, the 2026-07-28 era imports nothing of the session era, and nothing imports
 * the endpoint (the root). No import circle anywhere in src/, type-only imports included. The
 * browser entry of `sluice/client` (with package.json's `browser` substitutions) must statically
 * reach no node:* module.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT, sourceTree } from '../helpers/source-tree.js';

interface Import {
  readonly spec: string;
  readonly typeOnly: boolean;
  readonly dynamic: boolean;
}

/** Static and dynamic imports and re-exports of one module's text (comments stripped first). */
export function importsOf(source: string): Import[] {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: Import[] = [];
  const stat = /^\s*(?:import|export)\s+(type\s+)?(?:[^'"`;]*?\s+from\s+)?'([^']+)'/gm;
  for (const m of text.matchAll(stat))
    out.push({ spec: m[2] ?? '', typeOnly: m[1] !== undefined, dynamic: false });
  for (const m of text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) {
    out.push({ spec: m[1] ?? '', typeOnly: false, dynamic: true });
  }
  return out;
}

const BUILDING_BLOCKS = [
  'jsonrpc',
  'http',
  'sse',
  'flow',
  'events',
  'security',
  'modern',
  'auth',
  'trace',
  'errors.ts',
];
/** What each layer (first path segment under src/) may import from src/, besides itself. */
const ALLOWED: Record<string, readonly string[]> = {
  ...Object.fromEntries(BUILDING_BLOCKS.map((b) => [b, BUILDING_BLOCKS])),
  core: BUILDING_BLOCKS,
  // Scale-out on Redis (node:http peer hop, node:crypto HMAC): a stage the Node binding adds to the core.
  cluster: ['core', ...BUILDING_BLOCKS],
  // The tasks extension: a hook the 2026-07-28 era offers requests to, its stores (Redis over the
  // cluster's RedisLink seam).
  tasks: ['core', 'cluster', ...BUILDING_BLOCKS],
  server: ['core', 'cluster', 'tasks', ...BUILDING_BLOCKS],
  // The web-standard binding: the core (Prometheus text included) and nothing of the Node binding.
  fetch: ['core', ...BUILDING_BLOCKS],
  // The client ships to browsers: only the building blocks that import nothing platform-specific.
  client: ['jsonrpc', 'http', 'sse', 'trace', 'errors.ts'],
  doctor: ['client', ...BUILDING_BLOCKS],
  demo: ['server', ...BUILDING_BLOCKS],
  // Every layer (docs/design.md: `cli/` imports anything); `sluice serve` loads the cluster on demand.
  cli: ['server', 'client', 'doctor', 'demo', 'core', 'tasks', 'cluster', ...BUILDING_BLOCKS],
};
/** Layers that must not import node:* even as a type (the core's types are runtime-neutral). */
const NODE_TYPES_FORBIDDEN = new Set(['core']);
/** Inside the core: folders that must not import another (the 2026-07-28 era knows nothing of sessions). */
const CORE_FORBIDDEN: readonly (readonly [string, string])[] = [['src/core/era-2026/', 'src/core/era-2025/']];
/**
 * The answer (src/core/answer/) alone opens SSE connections and so alone joins and leaves the live
 * set; no other core file builds a writer or touches the set.
 */
const ANSWER_DIR = 'src/core/answer/';
const ANSWER_ONLY = /new SseWriter\(|\blive\.(?:add|delete)\(/;
/** The core's root: it builds everything and nothing under src/core/ imports it. */
const CORE_ROOT = 'src/core/endpoint.ts';
/** node:* modules a layer must not import at run time (type-only imports are erased). */
const NODE_FORBIDDEN: Record<string, RegExp> = {
  core: /^node:/,
  fetch: /^node:/,
  ...Object.fromEntries(BUILDING_BLOCKS.map((b) => [b, /^node:/])),
};
/** Client files allowed to import node:* (the Node HTTP adapter, loaded only on Node). */
const CLIENT_NODE_FILES = /^src\/client\/http-node[a-z-]*\.ts$/;

function layerOf(file: string): string {
  const parts = file.split('/');
  return parts[1] ?? '';
}

function resolveSpec(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  return posix.join(posix.dirname(from), spec).replace(/\.js$/, '.ts');
}

/** Every rule broken by `files` (path relative to the repo, e.g. src/core/post.ts → its source). */
export function violations(files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, source] of files) {
    const layer = layerOf(file);
    const allowed = ALLOWED[layer];
    if (allowed === undefined) {
      found.push(`${file}: unknown layer '${layer}' (add it to docs/design.md and this test)`);
      continue;
    }
    if (file.startsWith('src/core/') && !file.startsWith(ANSWER_DIR) && ANSWER_ONLY.test(source))
      found.push(`${file}: only ${ANSWER_DIR} opens SSE writers and touches the live set`);
    for (const imp of importsOf(source)) {
      const target = resolveSpec(file, imp.spec);
      if (target !== undefined) {
        const to = layerOf(target);
        if (to !== layer && !allowed.includes(to)) found.push(`${file}: ${layer} must not import ${target}`);
        if (target === CORE_ROOT && layer === 'core')
          found.push(`${file}: nothing in the core imports ${target}`);
        for (const [from, not] of CORE_FORBIDDEN) {
          if (file.startsWith(from) && target.startsWith(not))
            found.push(`${file}: ${from} must not import ${target}`);
        }
        continue;
      }
      if (imp.spec.startsWith('node:') && imp.typeOnly && NODE_TYPES_FORBIDDEN.has(layer)) {
        found.push(`${file}: ${layer} must not import ${imp.spec}, not even as a type`);
      }
      if (!imp.spec.startsWith('node:') || imp.typeOnly) continue;
      if (layer === 'client' && !CLIENT_NODE_FILES.test(file)) {
        found.push(`${file}: only the Node adapter (http-node*.ts) may import ${imp.spec}`);
      }
      if (NODE_FORBIDDEN[layer]?.test(imp.spec) === true) {
        found.push(`${file}: ${layer} must not import ${imp.spec}`);
      }
    }
  }
  return found;
}

/**
 * Every import circle among `files` (type-only and dynamic imports included), each as the path that
 * closes it, e.g. `src/a.ts → src/b.ts → src/a.ts`; one per strongly connected group of files.
 */
export function circles(files: ReadonlyMap<string, string>): string[] {
  const edges = new Map<string, string[]>();
  for (const [file, source] of files) {
    const to: string[] = [];
    for (const imp of importsOf(source)) {
      const target = resolveSpec(file, imp.spec);
      if (target !== undefined && files.has(target)) to.push(target);
    }
    edges.set(file, to);
  }
  // Tarjan's strongly connected components; a group of two or more files (or a file importing
  // itself) is a circle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = new Set<string>();
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w === undefined) break;
      onStack.delete(w);
      group.add(w);
    } while (w !== v);
    if (group.size > 1 || (edges.get(v) ?? []).includes(v)) found.push(closingPath(v, group, edges));
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** A shortest path from `start` back to itself inside its group (breadth first). */
function closingPath(
  start: string,
  group: ReadonlySet<string>,
  edges: ReadonlyMap<string, string[]>,
): string {
  const from = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i] as string;
    for (const w of edges.get(v) ?? []) {
      if (!group.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u: string | undefined = v; u !== undefined && u !== start; u = from.get(u)) path.unshift(u);
        path.unshift(start);
        return path.join(' → ');
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return start;
}

/**
 * node:* modules statically reachable from `entry` (dynamic imports not followed, `browser`
 * substitutions applied), with the path that reaches each.
 */
export function nodeReach(
  files: ReadonlyMap<string, string>,
  entry: string,
  browser: ReadonlyMap<string, string>,
): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const walk = (file: string, path: string[]): void => {
    const actual = browser.get(file) ?? file;
    if (seen.has(actual)) return;
    seen.add(actual);
    const source = files.get(actual);
    if (source === undefined) return;
    for (const imp of importsOf(source)) {
      if (imp.dynamic || imp.typeOnly) continue;
      if (imp.spec.startsWith('node:')) found.push([...path, actual, imp.spec].join(' → '));
      const target = resolveSpec(actual, imp.spec);
      if (target !== undefined) walk(target, [...path, actual]);
    }
  };
  walk(entry, []);
  return found;
}

/** package.json's `browser` map, from dist/*.js paths back to src/*.ts. */
function browserMap(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    browser?: Record<string, string>;
  };
  const toSrc = (p: string): string => p.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts');
  return new Map(Object.entries(pkg.browser ?? {}).map(([from, to]) => [toSrc(from), toSrc(to)]));
}

describe('layers (docs/design.md)', () => {
  test('the source follows the import direction', () => {
    const files = sourceTree();
    assert.ok(files.size > 50, `read only ${files.size} files under src/`);
    assert.deepEqual(violations(files), []);
  });

  test('no import circle anywhere in src/ (type-only imports included)', () => {
    assert.deepEqual(circles(sourceTree()), []);
  });

  test('the browser entry of sluice/client reaches no node:* module', () => {
    const files = sourceTree();
    const browser = browserMap();
    assert.ok(browser.size > 0, 'package.json has no browser map');
    assert.deepEqual(nodeReach(files, 'src/client/index.ts', browser), []);
    // Without the substitution the Node adapter is still only reached dynamically.
    assert.deepEqual(nodeReach(files, 'src/client/index.ts', new Map()), []);
  });

  test('the check catches what it is for', () => {
    const bad = new Map([
      [
        'src/client/a.ts',
        "import { Session } from '../core/session.js';\nimport { request } from 'node:http';",
      ],
      ['src/core/b.ts', "import { createMcpHandler } from '../server/create-handler.js';"],
      [
        'src/core/c.ts',
        "import type { IncomingMessage } from 'node:http';\nimport { Server } from 'node:http';",
      ],
      ['src/jsonrpc/d.ts', "export {\n  x,\n} from '../client/wire.js';"],
      ['src/server/e.ts', "const m = await import('../cli/main.js');"],
      ['src/fetch/f.ts', "import { renderPrometheus } from '../server/prometheus.js';"],
      ['src/core/era-2026/g.ts', "import type { PostInput } from '../era-2025/post.js';"],
      ['src/core/era-2025/h.ts', "import type { Endpoint } from '../endpoint.js';"],
      ['src/core/era-2026/i.ts', 'this.#era.core.live.add(w);'],
      [
        'src/core/pipeline/request-view.ts',
        "import type { IncomingMessage } from 'node:http';\nexport interface RequestView { node?: IncomingMessage }",
      ],
    ]);
    assert.deepEqual(violations(bad), [
      'src/client/a.ts: client must not import src/core/session.ts',
      'src/client/a.ts: only the Node adapter (http-node*.ts) may import node:http',
      'src/core/b.ts: core must not import src/server/create-handler.ts',
      'src/core/c.ts: core must not import node:http, not even as a type',
      'src/core/c.ts: core must not import node:http',
      'src/jsonrpc/d.ts: jsonrpc must not import src/client/wire.ts',
      'src/server/e.ts: server must not import src/cli/main.ts',
      'src/fetch/f.ts: fetch must not import src/server/prometheus.ts',
      'src/core/era-2026/g.ts: src/core/era-2026/ must not import src/core/era-2025/post.ts',
      'src/core/era-2025/h.ts: nothing in the core imports src/core/endpoint.ts',
      'src/core/era-2026/i.ts: only src/core/answer/ opens SSE writers and touches the live set',
      'src/core/pipeline/request-view.ts: core must not import node:http, not even as a type',
    ]);
    const loops = new Map([
      ['src/client/context.ts', "import { receive } from './inbound.js';"],
      ['src/client/inbound.ts', "import type { TransportContext } from './context.js';"],
      ['src/core/a.ts', "import { b } from './b.js';"],
      ['src/core/b.ts', "export { c } from './c.js';"],
      ['src/core/c.ts', "const a = () => import('./a.js');"],
      ['src/core/d.ts', "import { a } from './a.js';"],
    ]);
    assert.deepEqual(circles(loops), [
      'src/client/context.ts → src/client/inbound.ts → src/client/context.ts',
      'src/core/a.ts → src/core/b.ts → src/core/c.ts → src/core/a.ts',
    ]);
    assert.deepEqual(
      circles(new Map([...loops].filter(([f]) => f !== 'src/client/inbound.ts' && f !== 'src/core/c.ts'))),
      [],
    );
    const reach = new Map([
      ['src/client/index.ts', "export { t } from './t.js';\nconst lazy = () => import('node:zlib');"],
      ['src/client/t.ts', "import { x } from './n.js';"],
      ['src/client/n.ts', "import { Agent } from 'node:http';"],
      ['src/client/n.browser.ts', "import type { Agent } from 'node:http';"],
    ]);
    assert.deepEqual(nodeReach(reach, 'src/client/index.ts', new Map()), [
      'src/client/index.ts → src/client/t.ts → src/client/n.ts → node:http',
    ]);
    assert.deepEqual(
      nodeReach(reach, 'src/client/index.ts', new Map([['src/client/n.ts', 'src/client/n.browser.ts']])),
      [],
    );
  });
});
