// What the client-side commands (call, tools, doctor) share: parsing --header values and connecting an
// SDK Client over Sluice's transport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { AuthorizationError, StreamableHttpClientTransport, UnauthorizedError } from '../client/index.js';
import { storedAuth } from './credentials.js';
import { endpointUrl, UNPROVIDED, unauthorizedHint } from './hints.js';
import { UsageError } from './usage-error.js';

export { UsageError };

/** Parses repeated `--header 'K: V'` values. Throws a usage error on a value without a colon. */
export function parseHeaders(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const raw of values) {
    const colon = raw.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header expects 'Name: value', got '${raw}'`);
    // Header names are case-insensitive (RFC 9110 §5.1): one spelling, so a repeat overrides.
    headers[raw.slice(0, colon).trim().toLowerCase()] = raw.slice(colon + 1).trim();
  }
  return headers;
}

/** What connectClient reads of a command's CONNECT_OPTIONS, as parseArgs gives them. */
export interface ConnectFlags {
  readonly token?: string | undefined;
  readonly 'follow-redirects'?: boolean | undefined;
}

/** A connected client of the CLI. */
export interface Connection {
  readonly client: Client;
  readonly transport: StreamableHttpClientTransport;
  /** Settles once every send in flight has. */
  settle(): Promise<void>;
  /** What the server asked for that the CLI does not provide (e.g. 'sampling (an LLM completion)'). */
  unprovided(): string[];
}

/** One `notifications/message` record as a stderr line: `log LEVEL [LOGGER]: DATA`. */
export function logLine(params: { level?: unknown; logger?: unknown; data?: unknown }): string {
  const data = typeof params.data === 'string' ? params.data : JSON.stringify(params.data);
  const logger = typeof params.logger === 'string' ? ` ${params.logger}` : '';
  return `log ${String(params.level)}${logger}: ${data}`;
}

/**
 * A connected SDK Client over the Sluice transport, with the in-flight sends tracked (for a clean Ctrl-C). The
 * server's log records (`notifications/message`) go to stderr, one line each. A request the server sends that
 * the CLI cannot answer (sampling, elicitation, roots) is answered with an error that says so, instead of the
 * bare "Method not found" the SDK would send, and remembered for the command's own error line.
 */
export async function connectClient(
  url: string,
  headers: Record<string, string>,
  /** The command's CONNECT_OPTIONS values (spec/connect-options.ts); `--header` comes parsed in `headers`. */
  flags: ConnectFlags,
): Promise<Connection> {
  const token = flags.token;
  const parsed = endpointUrl(url);
  const client = new Client({ name: 'sluice-cli', version: '0.1.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    process.stderr.write(`${logLine(n.params)}\n`);
  });
  // Credentials from `sluice login`, unless the caller brings its own.
  const auth = token === undefined && headers['authorization'] === undefined ? storedAuth(url) : undefined;
  const transport = new StreamableHttpClientTransport(parsed, {
    headers,
    ...(token !== undefined ? { token } : {}),
    // Stored tokens outlive this process, so they must not be bound to a key that does not (RFC 9449).
    ...(auth !== undefined
      ? { authProvider: auth, dpop: false, insecureOAuthUrls: auth.insecureOAuthUrls }
      : {}),
    protocol: client,
    // --follow-redirects: client/redirect.ts says what crosses to another origin and what does not.
    redirectPolicy: flags['follow-redirects'] === true ? 'follow' : 'same-origin',
  });
  const sends = new Set<Promise<void>>();
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const p = send(message, options);
    sends.add(p);
    p.then(
      () => sends.delete(p),
      () => sends.delete(p),
    );
    return p;
  };
  const asked = new Set<string>();
  // A request no handler takes (the CLI registers none): the SDK answers it through this hook.
  client.fallbackRequestHandler = async (request) => {
    const what = Object.hasOwn(UNPROVIDED, request.method) ? UNPROVIDED[request.method] : undefined;
    // The SDK answers with the thrown error's `code` and `message` (an McpError would prefix its code twice).
    const refuse = (message: string) => Object.assign(new Error(message), { code: ErrorCode.MethodNotFound });
    if (what === undefined) throw refuse(`Method not found: ${request.method}`);
    asked.add(what);
    throw refuse(`the sluice CLI does not provide ${what}; use a client that does`);
  };
  try {
    await client.connect(transport);
  } catch (error) {
    if (error instanceof UnauthorizedError && auth === undefined) {
      const sent = token !== undefined || headers['authorization'] !== undefined;
      throw new Error(unauthorizedHint(url, error.wwwAuthenticate, sent), { cause: error });
    }
    if (
      error instanceof UnauthorizedError ||
      (error instanceof AuthorizationError && error.reason === 'redirect-unavailable')
    ) {
      throw new Error(`${url} requires a login: run \`sluice login ${url}\``, { cause: error });
    }
    throw error;
  }
  return {
    client,
    transport,
    settle: async () => {
      await Promise.allSettled([...sends]);
    },
    unprovided: () => [...asked],
  };
}
