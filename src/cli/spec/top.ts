/**
 * `sluice top`'s text and the options its parser accepts (a CommandSpec, command-line.ts), apart from
 * the command itself: main.ts answers `--help` and a mistyped option from here, before it loads the
 * command (which for `serve` means the SDK, zod and the demo server: half a CPU-second).
 */

const HELP = `usage: sluice top [options] URL [URL...]

  URL                  the MCP endpoint as 'sluice serve' prints it (http://127.0.0.1:3000/mcp), or
                       its metrics URL (…/metrics); the server must run with --metrics. Several
                       URLs: the instances of one cluster, shown summed
  --interval SECONDS   time between scrapes (default 2; 0.1 to 3600)
  --once               one report (after one interval) and exit
  --count N            exit after N reports
  --json               one JSON line per interval even on a terminal (the default off a terminal)

On a terminal the screen is redrawn in place (q or Ctrl-C quits); otherwise each interval writes one
JSON object on its own line. Exit status: 0 done, 1 a URL could not be scraped at start, 2 bad usage.
`;

/** `sluice top`: its text and the options its parser accepts (CommandSpec). */
export const TOP_COMMAND = {
  command: 'top',
  usageLine: 'usage: sluice top URL [URL...] [--interval SECONDS] [--once] [--count N] [--json]',
  help: HELP,
  options: {
    interval: { type: 'string' },
    once: { type: 'boolean' },
    count: { type: 'string' },
    json: { type: 'boolean' },
  },
} as const;
