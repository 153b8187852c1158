/**
 * The options of every command that connects to a server as a client (`call`, `tools`, `task`; `doctor`
 * takes `--header` only): declared once so their parse, and what `--help` and connect.ts read, agree.
 */
export const HEADER_OPTION = { header: { type: 'string', multiple: true } } as const;
export const CONNECT_OPTIONS = { ...HEADER_OPTION, token: { type: 'string' } } as const;
