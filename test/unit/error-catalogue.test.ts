/**
 * Every error code is documented where a user looks for it: the server side's `SluiceErrorCode`s in
 * docs/errors.md (a table row naming the code), the client's `SluiceClientErrorCode`s in
 * docs/client.md's "Errors" section (written `…_SUFFIX` after the first). Codes are stable
 * (never reused or renamed), so a code that is added without its entry is caught here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (path: string): string => readFileSync(resolve(ROOT, path), 'utf8');

/** The string members of `export type NAME = | 'A' | 'B';` in `source`. */
export function unionMembers(source: string, name: string): string[] {
  const m = new RegExp(`export type ${name} =([^;]+);`).exec(source);
  if (m === null) throw new Error(`no union ${name}`);
  return [...(m[1] ?? '').matchAll(/'([A-Z_]+)'/g)].map((x) => x[1] ?? '');
}

test('every server error code has a row in docs/errors.md', () => {
  const codes = unionMembers(read('src/errors.ts'), 'SluiceErrorCode');
  assert.ok(codes.length >= 10, `found ${codes.length} codes`);
  const doc = read('docs/errors.md');
  assert.deepEqual(
    codes.filter((c) => !doc.includes(`| \`${c}\` |`)),
    [],
  );
});

test("every client error code is in docs/client.md's Errors section", () => {
  const codes = unionMembers(read('src/client/errors.ts'), 'SluiceClientErrorCode');
  assert.ok(codes.length >= 20, `found ${codes.length} codes`);
  const doc = read('docs/client.md');
  const section = doc.slice(doc.indexOf('## Errors'), doc.indexOf('\n## ', doc.indexOf('## Errors') + 1));
  const named = (c: string): boolean =>
    section.includes(`\`${c}\``) || section.includes(`\`…${c.slice('SLUICE_CLIENT'.length)}\``);
  assert.deepEqual(
    codes.filter((c) => !named(c)),
    [],
  );
});

test('the check catches what it is for', () => {
  const src = "export type Code =\n  | 'SLUICE_A'\n  | 'SLUICE_B';";
  assert.deepEqual(unionMembers(src, 'Code'), ['SLUICE_A', 'SLUICE_B']);
  assert.throws(() => unionMembers(src, 'Other'), /no union Other/);
});
