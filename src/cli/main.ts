#!/usr/bin/env node
// The `sluice` command: dispatches to one module per subcommand. No business logic lives here.
import { readFileSync } from 'node:fs';
import module from 'node:module';
import { type CommandSpec, type OptionsConfig, readCommandLine } from './command-line.js';
import { missingPackage } from './hints.js';
import { closest } from './near-miss.js';

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

/**
 * Each command's text and options (src/cli/spec/), which load in a few milliseconds: `--help` and a
 * mistyped option are answered from them before the command is loaded (the same parse, so the same
 * answer; `sluice serve --help` took half a CPU-second loading the SDK, zod and the demo server).
 * `task` reads a subcommand first and parses on its own.
 */
const specs: Record<string, () => Promise<CommandSpec<OptionsConfig>>> = {
  serve: async () => (await import('./spec/serve.js')).SERVE_COMMAND,
  call: async () => (await import('./spec/call.js')).CALL_COMMAND,
  tools: async () => (await import('./spec/tools.js')).TOOLS_COMMAND,
  doctor: async () => (await import('./spec/doctor.js')).DOCTOR_COMMAND,
  top: async () => (await import('./spec/top.js')).TOP_COMMAND,
  login: async () => (await import('./spec/login.js')).LOGIN_COMMAND,
  logout: async () => (await import('./spec/login.js')).LOGOUT_COMMAND,
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
  const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
  if (spec !== undefined) {
    const early = readCommandLine(await spec(), argv.slice(1));
    if (typeof early === 'number') return early;
  }
  const command = await load();
  return command(argv.slice(1));
}

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const said = missingPackage(error) ?? (error instanceof Error ? error.message : String(error));
    process.stderr.write(`sluice: ${said}\n`);
    process.exitCode = 1;
  },
);
