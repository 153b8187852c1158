/**
 * `sluice login`'s text and the options its parser accepts (a CommandSpec, command-line.ts), apart from
 * the command itself: main.ts answers `--help` and a mistyped option from here, before it loads the
 * command (which for `serve` means the SDK, zod and the demo server: half a CPU-second).
 */

const LOGIN_HELP = `usage: sluice login URL [options]

Logs in to an MCP server that requires OAuth: prints the authorization URL (opens it with --open), waits for the
browser to come back to a listener on 127.0.0.1, and stores the credentials (mode 0600) in
$XDG_CONFIG_HOME/sluice/credentials.json (default ~/.config/sluice). sluice call, tools and doctor then use them.

options:
  --client-id ID          a client registered with the authorization server beforehand
  --client-secret SECRET  its secret (confidential clients)
  --port N                the loopback listener's port (default: any free port; fix it when the client was
                          registered with one redirect URI)
  --open                  open the authorization URL in the browser
  --timeout-seconds N     how long to wait for the browser (default 300)
  --insecure-oauth-urls   let the OAuth client reach an authorization server over plain HTTP or on an internal
                          address the server named (refused by default: a hostile server could aim it at a cloud
                          metadata service or a local port); remembered for this server's later commands
  -h, --help              this help`;

const LOGOUT_HELP = `usage: sluice logout URL

Removes the credentials stored for URL by sluice login.`;

/** `sluice login`: its text and the options its parser accepts (CommandSpec). */
export const LOGIN_COMMAND = {
  command: 'login',
  usageLine:
    'usage: sluice login URL [--client-id ID] [--client-secret SECRET] [--port N] [--open] [--timeout-seconds N] [--insecure-oauth-urls]',
  help: LOGIN_HELP,
  options: {
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    port: { type: 'string' },
    open: { type: 'boolean' },
    'timeout-seconds': { type: 'string' },
    'insecure-oauth-urls': { type: 'boolean' },
  },
} as const;

/** `sluice logout`: no options. */
export const LOGOUT_COMMAND = {
  command: 'logout',
  usageLine: 'usage: sluice logout URL',
  help: LOGOUT_HELP,
  options: {},
} as const;
