/**
 * The options of every command that connects to a server as a client (`call`, `tools`, `task`; `doctor`
 * takes `--header` only): declared once so their parse, and what `--help` and connect.ts read, agree.
 */
export const HEADER_OPTION = { header: { type: 'string', multiple: true } } as const;
export const CONNECT_OPTIONS = {
  ...HEADER_OPTION,
  token: { type: 'string' },
  'follow-redirects': { type: 'boolean' },
} as const;

/** The help line of `--follow-redirects`, the same in every command that takes it. */
export const FOLLOW_REDIRECTS_HELP = `  --follow-redirects
                   follow a 307/308 to another origin (a server that moved): the session id and
                   --header values go along, the token and cookies do not; never from https to http`;
