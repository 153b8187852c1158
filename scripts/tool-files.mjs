// Which compiled test files need what scripts/install-tools.mjs installs (the conformance CLIs, the
// MCP Inspector, Node 22 and 24 under tools/): `npm test` starts the other files while those installs
// still wait on the registry (scripts/run-tests.mjs), and holds these back until they end. Found by
// reading, not by a list to keep: a file needs the tools when it or a module it imports (relative
// imports, followed through dist/) names a path under tools/. Naming one in a comment is enough to be
// held back, which costs a file a few seconds at most; missing one would let it find no tools.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** `tools/conformance…`, `tools/inspector…`, `tools/node24…`, or `tools/${name}` built at run time. */
const TOOL_PATH = /\btools\/(?:\$\{|conformance|inspector|node24)/;
/** Relative static imports, re-exports and dynamic imports of compiled ESM. */
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** A reader that remembers each module's answer (one scan of a module for the whole run). */
export function toolReader() {
  const known = new Map();
  /** True when `file` (a compiled .js path) or one of its relative imports names a path under tools/. */
  function needsTools(file) {
    const path = resolve(file);
    const seen = known.get(path);
    if (seen !== undefined) return seen;
    known.set(path, false); // an import circle ends here; the first visit gives the answer
    if (!existsSync(path)) return false;
    const text = readFileSync(path, 'utf8');
    let needs = TOOL_PATH.test(text);
    for (const m of text.matchAll(RELATIVE_IMPORT)) {
      if (needs) break;
      needs = needsTools(resolve(dirname(path), m[1]));
    }
    known.set(path, needs);
    return needs;
  }
  return needsTools;
}
