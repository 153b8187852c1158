#!/usr/bin/env node
// The `sluice` command: dispatches to one module per subcommand. No business logic lives here.
import { readFileSync } from 'node:fs';

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

const USAGE_LINE = 'usage: sluice <serve|call|tools|doctor> [options]   (sluice --help lists the commands)';

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
  if (name === undefined) {
    process.stderr.write(`sluice: expected a command\n${USAGE_LINE}\n`);
    return 2;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (load === undefined) {
    const what = name.startsWith('-') ? `unknown option '${name}'` : `unknown command '${name}'`;
    process.stderr.write(`sluice: ${what}\n${USAGE_LINE}\n`);
    return 2;
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
