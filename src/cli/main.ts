#!/usr/bin/env node
// The `sluice` command: dispatches to one module per subcommand. No business logic lives here.
import { parseArgs } from 'node:util';

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).main,
  call: async () => (await import('./call.js')).main,
  tools: async () => (await import('./tools.js')).main,
  'conformance-client': async () => (await import('./conformance-client.js')).main,
  doctor: async () => (await import('./doctor.js')).main,
  login: async () => (await import('./login.js')).main,
  logout: async () => (await import('./login.js')).logout,
};

const USAGE = `usage: sluice <command> [options]

commands:
  serve               run the demo MCP server (Streamable HTTP)
  call URL TOOL       call a tool, rendering its progress
  tools URL           list a server's tools and their input schemas
  doctor URL          diagnose the network path to an MCP server
  login URL           log in to a server that requires OAuth (credentials for call, tools, doctor)
  logout URL          forget the credentials stored by login
  conformance-client  the client the official conformance suite drives

'sluice <command> --help' describes each command's options.`;

async function run(argv: string[]): Promise<number> {
  const { positionals } = parseArgs({ args: argv.slice(0, 1), allowPositionals: true, strict: false });
  const name = positionals[0];
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name === undefined ? 2 : 0;
  }
  const load = commands[name];
  if (load === undefined) {
    process.stderr.write(`sluice: unknown command '${name}'\n${USAGE}\n`);
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
