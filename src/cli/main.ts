#!/usr/bin/env node
// The `sluice` command: dispatches to one module per subcommand. No business logic lives here.
import { readFileSync } from 'node:fs';
import module from 'node:module';

/**
 * Node 22.1 and later keep the code V8 compiled for the modules a command loads (the SDK, zod, ajv,
 * Sluice) in `os.tmpdir()/node-compile-cache`, and the next start reuses it: 8 % less CPU for
 * `sluice tools` and for loading `sluice serve`, measured on Node 22.23 (docs/benchmarks.md, "CLI
 * start-up"). Called before any command is imported, so all of them are cached. Node 20 has no such
 * cache (a no-op there); `NODE_DISABLE_COMPILE_CACHE=1` turns it off, `NODE_COMPILE_CACHE=DIR` moves it.
 */
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).main,
  call: async () => (await import('./call.js')).main,
  task: async () => (await import('./task.js')).main,
  tools: async () => (await import('./tools.js')).main,
  'conformance-client': async () => (await import('./conformance-client.js')).main,
  doctor: async () => (await import('./doctor.js')).main,
  top: async () => (await import('./top.js')).main,
  login: async () => (await import('./login.js')).main,
  logout: async () => (await import('./login.js')).logout,
};

const USAGE_LINE = 'usage: sluice <serve|call|task|tools|doctor|top|login|logout> [options]';

const USAGE = `usage: sluice <command> [options]

commands:
  serve               run the demo MCP server (Streamable HTTP)
  call URL TOOL       call a tool, rendering its progress (--task: as a task, printing its id)
  task get|cancel ID URL  read or cancel a task (docs/tasks.md)
  tools URL           list a server's tools and their input schemas
  doctor URL          diagnose the network path to an MCP server
  top URL...          live view of running servers from their metrics
  login URL           log in to a server that requires OAuth (credentials for call, tools, doctor)
  logout URL          forget the credentials stored by login
  conformance-client  the client the official conformance suite drives

'sluice <command> --help' describes each command's options; 'sluice --version' prints the version.`;

/** The package's version, from the package.json two levels above dist/src/cli (the same in a clone). */
function version(): string {
  const text = readFileSync(new URL('../../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/** Bad usage, as every command reports it: the reason, one line of usage, a hint; exit 2. */
function usage(reason: string, suggestion: string | undefined): number {
  const hint = suggestion === undefined ? '' : `did you mean '${suggestion}'? `;
  process.stderr.write(`sluice: ${reason}\n${USAGE_LINE}\n${hint}run 'sluice --help' for the commands\n`);
  return 2;
}

/** The command within two edits of what was typed (a typo such as 'serv' or 'dcotor'), if one is. */
function closest(typed: string, names: string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = editDistance(typed.toLowerCase(), name);
    if (d <= 2 && (best === undefined || d < best.d)) best = { name, d };
  }
  return best?.name;
}

/** Optimal string alignment distance (insertions, deletions, substitutions, adjacent swaps). */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || a.length > 64) return 3;
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    const up = d[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = v;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

async function run(argv: string[]): Promise<number> {
  const name = argv[0];
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (name === '--version' || name === '-V' || name === '-v' || name === 'version') {
    process.stdout.write(`sluice ${version()}\n`);
    return 0;
  }
  if (name === undefined) return usage('expected a command', undefined);
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (load === undefined) {
    if (name.startsWith('-')) return usage(`unknown option '${name}'`, undefined);
    return usage(`unknown command '${name}'`, closest(name, Object.keys(commands)));
  }
  const command = await load();
  return command(argv.slice(1));
}

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`sluice: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
