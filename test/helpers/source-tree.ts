/**
 * The project's TypeScript sources, for the tests that hold the source itself to a rule (the import
 * direction, per-request objects, owned state): every `.ts` file under src/, by its path from the
 * repository root (forward slashes), with its text.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs from dist/test/helpers). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export function sourceTree(): Map<string, string> {
  const files = new Map<string, string>();
  const visit = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.name.endsWith('.ts'))
        files.set(relative(ROOT, p).split('\\').join('/'), readFileSync(p, 'utf8'));
    }
  };
  visit(join(ROOT, 'src'));
  return files;
}
