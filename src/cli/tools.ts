// `sluice tools URL [--header 'K: V' …] [--token T] [--json]`: lists a server's tools with their input schemas.
import { parseArgs } from 'node:util';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, parseHeaders, UsageError } from './connect.js';
import { listAllTools } from './tool-args.js';

const USAGE = `usage: sluice tools URL [--header 'K: V' ...] [--token T] [--json]

Lists the server's tools (all pages) with their input schemas; --json prints them as one JSON array.`;

function render(tool: Tool): string {
  let out = `${tool.name}${tool.title !== undefined ? ` (${tool.title})` : ''}\n`;
  if (tool.description !== undefined) out += `  ${tool.description.replace(/\n/g, '\n  ')}\n`;
  const schema = JSON.stringify(tool.inputSchema, null, 2).replace(/\n/g, '\n    ');
  out += `  input: ${schema}\n`;
  return out;
}

export async function main(argv: string[]): Promise<number> {
  let values: { header?: string[]; token?: string; json?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        header: { type: 'string', multiple: true },
        token: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    process.stderr.write(
      `sluice tools: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`,
    );
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const url = positionals[0];
  if (url === undefined || positionals.length > 1) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let connection: Awaited<ReturnType<typeof connectClient>> | undefined;
  try {
    connection = await connectClient(url, parseHeaders(values.header ?? []), values.token);
    const tools = await listAllTools(connection.client);
    if (values.json === true) {
      process.stdout.write(`${JSON.stringify(tools)}\n`);
    } else {
      process.stdout.write(tools.length === 0 ? '(no tools)\n' : tools.map(render).join('\n'));
    }
    return 0;
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    process.stderr.write(`sluice tools: ${text.replace(/\s+/g, ' ').trim()}\n`);
    return error instanceof UsageError ? 2 : 3;
  } finally {
    await connection?.client.close().catch(() => {});
  }
}
