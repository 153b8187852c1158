/**
 * `sluice call`'s text and the options its parser accepts (a CommandSpec, command-line.ts), apart from
 * the command itself: main.ts answers `--help` and a mistyped option from here, before it loads the
 * command (which for `serve` means the SDK, zod and the demo server: half a CPU-second).
 */

/** The one line of usage a usage error prints. */
import { CONNECT_OPTIONS, FOLLOW_REDIRECTS_HELP } from './connect-options.js';

const USAGE_LINE =
  "usage: sluice call URL TOOL [--arg k=v ...] [--args JSON] [--header 'K: V' ...] [--token T] [--follow-redirects] [--timeout MS] [--task] [--json]";

export const USAGE_CALL = `usage: sluice call URL TOOL [options]

  --arg k=v        a tool argument (repeatable). The value is coerced by the tool's inputSchema (from
                   tools/list): a string property gets the string as typed, number/integer/boolean are
                   parsed, object/array are JSON; a value that does not fit, a key the schema does
                   not list, or a required parameter left out (of --arg and --args) is a usage error.
                   Without a schema type: numbers, true/false, null and JSON-looking values are parsed.
  --args JSON      all arguments as one JSON object (--arg values are merged over it)
  --header 'K: V'  an extra request header (repeatable)
  --token T        sent as Authorization: Bearer T
${FOLLOW_REDIRECTS_HELP}
  --timeout MS     request timeout, reset by every progress event (default 60000)
  --task           run the call as a task (tasks extension, 2026-07-28): its progress while the server holds
                   it, then the task id once it is one (stderr; with --json {"type":"progress"} and
                   {"type":"task"} lines), then the task's status messages while it is polled;
                   'sluice task get|cancel ID URL' works on it from another terminal. Polling
                   gives up (exit 3) after --timeout MS without reaching the server, or at the task's TTL
  --json           NDJSON on stdout: {"type":"progress",…} per progress event and {"type":"partial","text":…}
                   per delta of partial output, in order, then {"type":"result",…}

output: a tool that streams partial output (e.g. the demo's 'generate') has its text written to stdout as it
arrives, on a terminal or a pipe. The final result is then printed only if it adds something: nothing more
when its text equals the streamed text, otherwise the whole result after the stream. Progress goes to
stderr: a live bar on a terminal, else at most one line per second (and the last one at the end).

The server's log records (notifications/message) are printed on stderr. The CLI provides no sampling,
elicitation or roots: a tool that asks for them fails, saying so.

exit codes: 0 ok, 1 tool error (isError), 2 usage, 3 transport/protocol failure, 130 interrupted`;

/** `sluice call`: its text and the options its parser accepts (CommandSpec). */
export const CALL_COMMAND = {
  command: 'call',
  usageLine: USAGE_LINE,
  help: USAGE_CALL,
  options: {
    arg: { type: 'string', multiple: true },
    args: { type: 'string' },
    ...CONNECT_OPTIONS,
    timeout: { type: 'string' },
    json: { type: 'boolean' },
    task: { type: 'boolean' },
  },
} as const;
