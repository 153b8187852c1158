// What the client-side commands (call, tools, doctor) share: parsing --header values and connecting an
// SDK Client over Sluice's transport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AuthorizationError, StreamableHttpClientTransport, UnauthorizedError } from '../client/index.js';
import { storedAuth } from './credentials.js';
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

/** A connected SDK Client over the Sluice transport, with the in-flight sends tracked (for a clean Ctrl-C). */
export async function connectClient(
  url: string,
  headers: Record<string, string>,
  token: string | undefined,
): Promise<{ client: Client; transport: StreamableHttpClientTransport; settle(): Promise<void> }> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`not a URL: ${url}`);
  }
  const client = new Client({ name: 'sluice-cli', version: '0.1.0' });
  // Credentials from `sluice login`, unless the caller brings its own.
  const auth = token === undefined && headers['authorization'] === undefined ? storedAuth(url) : undefined;
  const transport = new StreamableHttpClientTransport(parsed, {
    headers,
    ...(token !== undefined ? { token } : {}),
    ...(auth !== undefined ? { authProvider: auth } : {}),
    protocol: client,
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
  try {
    await client.connect(transport);
  } catch (error) {
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
  };
}
