/**
 * `sluice tools`'s text and the options its parser accepts (a CommandSpec, command-line.ts), apart from
 * the command itself: main.ts answers `--help` and a mistyped option from here, before it loads the
 * command (which for `serve` means the SDK, zod and the demo server: half a CPU-second).
 */

import { CONNECT_OPTIONS, FOLLOW_REDIRECTS_HELP } from './connect-options.js';

const USAGE_LINE =
  "usage: sluice tools URL [--schema] [--header 'K: V' ...] [--token T] [--follow-redirects] [--json]";

const USAGE = `usage: sluice tools URL [options]

  --schema         print each tool's full input schema under its line
  --header 'K: V'  an extra request header (repeatable)
  --token T        sent as Authorization: Bearer T
${FOLLOW_REDIRECTS_HELP}
  --json           the tools (all pages) as one JSON array, schemas included

One line per tool: its name, its parameters (required ones first, optional ones in [brackets]) and the
first line of its description. 'sluice call URL TOOL --arg k=v ...' calls one.`;

/** `sluice tools`: its text and the options its parser accepts (CommandSpec). */
export const TOOLS_COMMAND = {
  command: 'tools',
  usageLine: USAGE_LINE,
  help: USAGE,
  options: {
    ...CONNECT_OPTIONS,
    json: { type: 'boolean' },
    schema: { type: 'boolean' },
  },
} as const;
