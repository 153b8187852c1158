// `sluice tools URL [--schema] [--header 'K: V' …] [--token T] [--json]`: lists a server's tools, one line each
// (name, parameters, description); --schema prints each tool's full input schema, --json the raw list.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { readCommandLine } from './command-line.js';
import { type Connection, connectClient, parseHeaders, UsageError } from './connect.js';
import { endpointUrl, failureHint } from './hints.js';
import { TOOLS_COMMAND } from './spec/tools.js';
import { listAllTools, parameterSummary } from './tool-args.js';
import { oneLine, usageFailure } from './usage-error.js';

/** The widest name-and-parameters column before descriptions stop being aligned. */
const MAX_COLUMN = 48;
/** Descriptions are cut to this many characters (their first line). */
const MAX_DESCRIPTION = 100;

function head(tool: Tool): string {
  const params = parameterSummary(tool);
  return params === '' ? tool.name : `${tool.name} ${params}`;
}

function description(tool: Tool): string {
  const first = (tool.description ?? tool.title ?? '').split('\n')[0]?.trim() ?? '';
  return first.length > MAX_DESCRIPTION ? `${first.slice(0, MAX_DESCRIPTION - 1)}…` : first;
}

/** One line per tool, descriptions aligned in one column; with `schema`, the input schema indented below. */
export function renderTools(tools: readonly Tool[], schema: boolean): string {
  if (tools.length === 0) return '(no tools)\n';
  const width = Math.min(MAX_COLUMN, Math.max(...tools.map((t) => head(t).length)));
  let out = '';
  for (const tool of tools) {
    const h = head(tool);
    const d = description(tool);
    out += d === '' ? `${h}\n` : `${h.padEnd(width)}  ${d}\n`;
    if (schema) out += `  ${JSON.stringify(tool.inputSchema, null, 2).replace(/\n/g, '\n  ')}\n`;
  }
  return out;
}

export async function main(argv: string[]): Promise<number> {
  const line = readCommandLine(TOOLS_COMMAND, argv);
  if (typeof line === 'number') return line;
  const { values, positionals } = line;
  const url = positionals[0];
  if (url === undefined || positionals.length > 1) {
    return usageFailure(
      'tools',
      url === undefined ? 'expected a URL' : 'expected one URL',
      TOOLS_COMMAND.usageLine,
    );
  }
  let endpoint: URL;
  let headers: Record<string, string>;
  try {
    endpoint = endpointUrl(url);
    headers = parseHeaders(values.header ?? []);
  } catch (error) {
    return usageFailure('tools', oneLine(error), TOOLS_COMMAND.usageLine);
  }
  let connection: Connection | undefined;
  try {
    connection = await connectClient(endpoint.href, headers, values);
    const tools = await listAllTools(connection.client);
    process.stdout.write(
      values.json === true ? `${JSON.stringify(tools)}\n` : renderTools(tools, values.schema === true),
    );
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return usageFailure('tools', oneLine(error), TOOLS_COMMAND.usageLine);
    process.stderr.write(`sluice tools: ${oneLine(error)}${failureHint(error, endpoint)}\n`);
    return 3;
  } finally {
    await connection?.client.close().catch(() => {});
  }
}
