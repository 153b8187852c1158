// `sluice call --task URL TOOL …` runs a tool as a task of the tasks extension (docs/tasks.md): it prints the
// task id at once, the call's progress (and partial output) while the server holds it and the task's status
// messages while it polls, then the result.
// `sluice task get|cancel ID URL [--header 'K: V' …] [--token T]` reads or cancels a task, from any terminal
// and through any instance of a cluster sharing the task store; the task's DetailedTask (get) or the ack
// (cancel) goes to stdout as JSON.
//
// Exit codes: 0 ok · 1 the tool returned isError · 2 usage · 3 failed, cancelled, expired, unknown, or a
// transport failure.

import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { callToolAsTask, TASKS_EXTENSION } from '../client/tasks.js';
import { partialMarkerOf } from '../jsonrpc/partial.js';
import { readCommandLine } from './command-line.js';
import { type Connection, connectClient, parseHeaders, UsageError } from './connect.js';
import { endpointUrl, failureHint } from './hints.js';
import { CONNECT_OPTIONS, FOLLOW_REDIRECTS_HELP } from './spec/connect-options.js';
import { oneLine, usageFailure } from './usage-error.js';

const USAGE_LINE =
  "usage: sluice task <get|cancel> ID URL [--header 'K: V' ...] [--token T] [--follow-redirects]";

export const USAGE_TASK = `${USAGE_LINE}

  get ID URL       the task's status (and its result or error once finished) as JSON on stdout
  cancel ID URL    cancels the task (a finished task stays as it is)
  --header 'K: V'  an extra request header (repeatable)
  --token T        sent as Authorization: Bearer T (a task belongs to the principal that created it)
${FOLLOW_REDIRECTS_HELP}

exit codes: 0 ok, 2 usage, 3 unknown task or transport failure`;

/** The 2026-07-28 `_meta` of the CLI's task requests, with the extension declared. */
const TASK_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'sluice-cli', version: '0.1.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
};

/**
 * `sluice call --task`: creates the task, prints its id (stderr, or a `{"type":"task"}` line with --json),
 * prints each new status message while the handle polls, and returns the result. The caller prints it as
 * for a plain call. One polling loop (the handle's): it stops at the task's TTL, on an unknown task, and
 * after `outageMs` without reaching the server (the task may still run: `sluice task get` reads it later).
 */
export async function callAsTask(
  connection: Connection,
  tool: string,
  args: Record<string, unknown>,
  json: boolean,
  signal: AbortSignal,
  outageMs: number,
  onPartial: (text: string) => void,
): Promise<CallToolResult> {
  let last: string | undefined;
  /** One line per new message: `{"type":"status"|"progress",…}` with --json, else indented on stderr. */
  const say = (m: string | undefined, line: Record<string, unknown>) => {
    if (m === undefined || m === last) return;
    last = m;
    if (json) process.stdout.write(`${JSON.stringify(line)}\n`);
    else process.stderr.write(`  ${m}\n`);
  };
  const task = await callToolAsTask(
    connection.client,
    { name: tool, arguments: args, _meta: TASK_META },
    {
      signal,
      maxOutageMs: outageMs,
      onStatus: (s) => say(s.statusMessage, { type: 'status', message: s.statusMessage }),
      // While the server holds the call before it becomes a task (or answers it directly), its progress
      // comes on the call's answer: the same lines as the task's status messages after it.
      // Partial output in the progress form (docs/partial-results.md) is a delta of the answer's text,
      // rendered as a plain call's is, not a status line.
      onProgress: (p) => {
        const delta = partialDelta(p);
        if (delta !== undefined) onPartial(delta);
        else
          say(p.message ?? (p.total === undefined ? `${p.progress}` : `${p.progress}/${p.total}`), {
            type: 'progress',
            ...p,
          });
      },
    },
  );
  if (task.immediate) return task.result() as Promise<CallToolResult>;
  if (json) process.stdout.write(`${JSON.stringify({ type: 'task', taskId: task.taskId })}\n`);
  else process.stderr.write(`task ${task.taskId}\n`);
  return task.result() as Promise<CallToolResult>;
}

/** The delta of a progress notification that carries partial output (its `_meta` marks it), else undefined. */
function partialDelta(p: Progress): string | undefined {
  return partialMarkerOf(p) !== undefined && typeof p.message === 'string' ? p.message : undefined;
}

/** The type of this command's option `word` names (`--name` or `--name=value`; TASK_COMMAND's, so a new one needs no edit here). */
function optionOf(word: string): { type: string | undefined; inline: boolean } {
  if (!word.startsWith('--')) return { type: undefined, inline: false };
  const eq = word.indexOf('=');
  const options = TASK_COMMAND.options as Record<string, { type: string }>;
  return { type: options[word.slice(2, eq === -1 ? undefined : eq)]?.type, inline: eq !== -1 };
}

/** Whether `word` is one of this command's options standing alone: a boolean flag, `-h`/`--help`, or `--name=value`. */
function ownFlag(word: string): boolean {
  if (word === '-h' || word === '--help') return true;
  const o = optionOf(word);
  return o.type !== undefined && o.inline === (o.type !== 'boolean');
}

/** Whether `word` is a string option of this command given without `=` (its value is the next word). */
function takesNext(word: string): boolean {
  const o = optionOf(word);
  return o.type === 'string' && !o.inline;
}

/**
 * The first word after `get`/`cancel` that is not one of this command's options is the task's ID, even
 * when it begins with `-`: a base64url ID may (any server's), and parseArgs would read it as an unknown
 * option. Such an ID is taken out before parsing and put back in its place among the positionals.
 */
function idAfterVerb(argv: readonly string[]): { rest: string[]; id?: string } {
  const verb = argv[0];
  if (verb !== 'get' && verb !== 'cancel') return { rest: [...argv] };
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i] ?? '';
    if (takesNext(word))
      i++; // its value follows
    else if (word === '--' || !word.startsWith('-'))
      break; // parseArgs reads a plain ID as it is
    else if (!ownFlag(word)) return { rest: [...argv.slice(0, i), ...argv.slice(i + 1)], id: word };
  }
  return { rest: [...argv] };
}

/** `sluice task`: its text and the options its parser accepts (CommandSpec). */
export const TASK_COMMAND = {
  command: 'task',
  usageLine: USAGE_LINE,
  help: USAGE_TASK,
  options: {
    ...CONNECT_OPTIONS,
  },
} as const;

export async function main(argv: string[]): Promise<number> {
  const { rest, id } = idAfterVerb(argv);
  const line = readCommandLine(TASK_COMMAND, rest);
  if (typeof line === 'number') return line;
  const { values } = line;
  const positionals =
    id === undefined ? line.positionals : [line.positionals[0] ?? '', id, ...line.positionals.slice(1)];
  const [verb, taskId, url] = positionals;
  if (verb !== 'get' && verb !== 'cancel') return usageFailure('task', `expected get or cancel`, USAGE_LINE);
  if (taskId === undefined || url === undefined || positionals.length > 3)
    return usageFailure('task', 'expected a task ID and a URL', USAGE_LINE);
  let headers: Record<string, string>;
  let endpoint: URL;
  try {
    headers = parseHeaders(values.header ?? []);
    endpoint = endpointUrl(url);
  } catch (error) {
    return usageFailure('task', oneLine(error), USAGE_LINE);
  }
  let connection: Connection | undefined;
  try {
    connection = await connectClient(endpoint.href, headers, values);
    const result = await connection.client.request(
      { method: `tasks/${verb}`, params: { taskId, _meta: TASK_META } } as never,
      { safeParse: (data: unknown) => ({ success: true as const, data }) } as never,
    );
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return usageFailure('task', oneLine(error), USAGE_LINE);
    const code = (error as { code?: unknown }).code;
    const reason = code === -32602 ? `the server does not know task ${taskId}` : oneLine(error);
    process.stderr.write(`sluice task: ${reason}${failureHint(error, endpoint)}\n`);
    return 3;
  } finally {
    await connection?.client.close().catch(() => {});
  }
}
