// The benchmarks' own MCP client for the session (2025-11-25) era over node:http: one POST, and the
// initialize + notifications/initialized handshake that opens a session. Small on purpose: the
// figures it helps take are the server's, so it adds nothing per request beyond node:http itself.
import { type Agent, request } from 'node:http';

export const PROTOCOL_VERSION = '2025-11-25';

/** The headers every POST carries (MCP 2025-11-25 basic/transports §Sending Messages to the Server). */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

export interface Reply {
  status: number;
  headers: Record<string, unknown>;
  /** The body; empty when `onData` took it. */
  text: string;
}

export interface PostOptions {
  /** Defaults to node's global agent. */
  agent?: Agent;
  /** Receives the body as it arrives (decoded as UTF-8) instead of collecting it into `text`. */
  onData?: (chunk: string) => void;
  /** The request fails when its socket is idle this long. @defaultValue none */
  timeoutMs?: number;
}

/** Bodies of `tools/call echo` requests with ids 1, 2, 3, … (one counter per call of this). */
export function echoBodies(text: string): () => string {
  let id = 0;
  return () =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: ++id,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text } },
    });
}

/** POSTs `body` with exactly `headers` and resolves once the whole answer has arrived. */
export function post(
  url: string | URL,
  headers: Readonly<Record<string, string>>,
  body: string,
  o: PostOptions = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const u = typeof url === 'string' ? new URL(url) : url;
    const req = request(
      {
        hostname: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        ...(o.agent === undefined ? {} : { agent: o.agent }),
        ...(o.timeoutMs === undefined ? {} : { timeout: o.timeoutMs }),
      },
      (res) => {
        const done = (text: string): void =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text });
        const { onData } = o;
        if (onData !== undefined) {
          res.setEncoding('utf8');
          res.on('data', onData);
          res.on('end', () => done(''));
        } else {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => done(Buffer.concat(chunks).toString()));
        }
        res.on('error', reject);
      },
    );
    if (o.timeoutMs !== undefined) req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Opens a session (initialize, then notifications/initialized) and returns the headers its
 * requests carry: BASE_HEADERS plus Mcp-Session-Id and MCP-Protocol-Version. Throws unless the
 * server answers 200 and then 202 (MCP 2025-11-25 basic/transports §Session Management).
 */
export async function openSession(
  url: string | URL,
  o: Omit<PostOptions, 'onData'> & { clientName?: string } = {},
): Promise<Record<string, string>> {
  const { clientName, ...opts } = o;
  const init = await post(
    url,
    BASE_HEADERS,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: clientName ?? 'bench', version: '1' },
      },
    }),
    opts,
  );
  const sid = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof sid !== 'string')
    throw new Error(`initialize: HTTP ${init.status} ${init.text.slice(0, 200)}`);
  const h = { ...BASE_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL_VERSION };
  const ok = await post(
    url,
    h,
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    opts,
  );
  if (ok.status !== 202) throw new Error(`notifications/initialized: HTTP ${ok.status}`);
  return h;
}
