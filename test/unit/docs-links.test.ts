/**
 * The repository stands alone: every Markdown document that code, tests, benches or docs name
 * exists in the repository, and nothing points outside it (no ../shared notes).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** Output files (a command's redirect, the bench report written to bench/results/), not references. */
const NOT_REFERENCES = new Set(['table.md', 'latest.md', 'modern-latest.md']);
/** This test names missing documents on purpose, to show that it catches them. */
const SELF = 'test/unit/docs-links.test.ts';

function filesUnder(dir: string, out: string[]): string[] {
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'results') filesUnder(p, out);
    } else if (/\.(ts|mjs|md)$/.test(e.name)) out.push(p);
  }
  return out;
}

/** Where a document named in `file` would be: relative to the file, the repository root, or docs/. */
function found(file: string, name: string): boolean {
  const candidates = [join(dirname(file), name), name, join('docs', name)];
  return candidates.some((c) => existsSync(join(ROOT, c)));
}

export function danglingReferences(file: string, text: string, exists: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\.\.\/)*[A-Za-z0-9_-][A-Za-z0-9_./-]*\.md\b/g)) {
    const name = m[0];
    if (NOT_REFERENCES.has(name.slice(name.lastIndexOf('/') + 1))) continue;
    if (name.includes('shared/') || !exists(name)) out.push(`${file}: ${name}`);
  }
  return out;
}

test('every document named in the repository is in the repository', () => {
  const files = [
    'README.md',
    ...filesUnder('src', []),
    ...filesUnder('test', []),
    ...filesUnder('bench', []),
  ];
  files.push(...filesUnder('docs', []), ...filesUnder('scripts', []));
  assert.ok(files.length > 80, `read only ${files.length} files`);
  const dangling = files
    .filter((f) => f !== SELF)
    .flatMap((f) =>
      danglingReferences(relative(ROOT, join(ROOT, f)), readFileSync(join(ROOT, f), 'utf8'), (n) =>
        found(f, n),
      ),
    );
  assert.deepEqual(dangling, []);
});

test('the check catches a missing document and a pointer outside the repository', () => {
  const text = 'see architecture.md, docs/errors.md and ../shared/peers.md; npm run bench > table.md';
  const exists = (n: string) => n === 'docs/errors.md' || n === '../shared/peers.md';
  assert.deepEqual(danglingReferences('src/x.ts', text, exists), [
    'src/x.ts: architecture.md',
    'src/x.ts: ../shared/peers.md',
  ]);
});

test("the README's package paragraph names every dependency and peer the package declares", () => {
  // A user reads that paragraph to know what an install brings in; it once named zod alone, while
  // jose (OAuth) is installed too and @opentelemetry/api is an optional peer.
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<
    string,
    Record<string, string> | undefined
  >;
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const paragraph = /The published package holds[\s\S]*?\n\n/.exec(readme)?.[0] ?? '';
  assert.ok(paragraph !== '', "README's 'The published package holds …' paragraph");
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const name of Object.keys(pkg[field] ?? {})) {
      assert.ok(
        paragraph.includes(`\`${name}\``),
        `README's package paragraph does not name ${field} ${name}`,
      );
    }
  }
});
