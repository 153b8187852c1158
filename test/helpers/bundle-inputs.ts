/**
 * The `sluice` command is a bundle (scripts/bundle-cli.mjs): a process loads its entry (dist/src/cli/main.js)
 * and chunks under dist/src/cli/bundle/, not Sluice's modules one by one. This maps a loaded file back to
 * the modules of dist/src it holds (`folder/file.js`), from the bundle's metafile; any other file of dist/src
 * is itself. A main.js that tsc wrote (a build without the bundle step) imports no chunk and is itself.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './spawn-serve.js';

interface Output {
  inputs: Record<string, unknown>;
}

const CLI = join(repoRoot(), 'dist', 'src', 'cli');

function outputs(): Record<string, Output> {
  const meta = join(CLI, 'bundle', 'meta.json');
  return existsSync(meta) ? (JSON.parse(readFileSync(meta, 'utf8')) as Record<string, Output>) : {};
}

/** Whether dist/src/cli/main.js is the bundle's entry (it imports chunks) rather than tsc's module. */
function mainIsBundle(): boolean {
  return readFileSync(join(CLI, 'main.js'), 'utf8').includes('./bundle/');
}

/** The modules of dist/src (`folder/file.js`) that the loaded files `urls` hold. */
export function sourceModules(urls: readonly string[]): Set<string> {
  const meta = outputs();
  const bundled = mainIsBundle();
  const modules = new Set<string>();
  for (const url of urls) {
    const file = /\/dist\/src\/(.+)$/.exec(url)?.[1];
    if (file === undefined) continue;
    const inBundle = file.startsWith('cli/bundle/') || (bundled && file === 'cli/main.js');
    const output = inBundle ? meta[`dist/src/${file}`] : undefined;
    if (output === undefined) {
      modules.add(file);
      continue;
    }
    for (const input of Object.keys(output.inputs)) {
      const m = /^dist\/src\/(.+)$/.exec(input)?.[1];
      if (m !== undefined) modules.add(m);
    }
  }
  return modules;
}
