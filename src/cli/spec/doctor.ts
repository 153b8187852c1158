/**
 * `sluice doctor`'s text and the options its parser accepts (a CommandSpec, command-line.ts), apart from
 * the command itself: main.ts answers `--help` and a mistyped option from here, before it loads the
 * command (which for `serve` means the SDK, zod and the demo server: half a CPU-second).
 */

import { DEFAULT_IDLE_SECONDS } from '../../doctor/types.js';
import { HEADER_OPTION } from './connect-options.js';

const USAGE_LINE = "usage: sluice doctor URL [--header 'K: V' ...] [--idle-seconds N] [--quick] [--json]";

const HELP = `usage: sluice doctor URL [options]

  --header 'K: V'      send this header on every request (repeatable; e.g. Authorization)
  --idle-seconds N     hold a quiet stream open this long to find idle timeouts (default ${DEFAULT_IDLE_SECONDS})
  --quick              skip the idle check: a few seconds instead of over a minute, but idle timeouts on the
                       path (ALB 60 s, Cloudflare ~100 s, nginx 60 s) go unnoticed
  --json               print machine-readable results
  -h, --help           this text

Checks: initialize, buffering, headers, compression, unknown-session (404), method-not-allowed (405),
idle, forwarding (between cluster instances), delete. Each is ok, warn, fail or skip (not run, with the
reason). Exit code 0 when nothing failed, 1 otherwise.
`;

/** `sluice doctor`: its text and the options its parser accepts (CommandSpec). */
export const DOCTOR_COMMAND = {
  command: 'doctor',
  usageLine: USAGE_LINE,
  help: HELP,
  options: {
    ...HEADER_OPTION,
    'idle-seconds': { type: 'string' },
    quick: { type: 'boolean' },
    json: { type: 'boolean' },
  },
} as const;
