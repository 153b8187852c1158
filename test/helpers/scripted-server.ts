/**
 * A scripted node:http server on 127.0.0.1:0 for the client transport's wire tests: every request
 * is read whole, recorded (method, URL, headers, JSON body, arrival time) and then handed to the
 * test's handler, which answers it however the scenario needs (or holds it).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | undefined;
  /** Date.now() when the request's body had arrived. */
  at: number;
}

/** Answers one recorded request; `all` is every request recorded so far, this one last. */
export type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen, all: Seen[]) => void;

export interface Scripted {
  /** `http://127.0.0.1:PORT/mcp` */
  url: string;
  seen: Seen[];
  closeIdle(): void;
  close(): Promise<void>;
}

export async function scripted(handler: Handler): Promise<Scripted> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const entry: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text.length > 0 ? (JSON.parse(text) as Record<string, unknown>) : undefined,
        at: Date.now(),
      };
      seen.push(entry);
      handler(req, res, entry, seen);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    closeIdle() {
      server.closeIdleConnections();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A 2025-11-25 `initialize` response to the request `seen` recorded (its id echoed). */
export function initializeAnswer(seen: Seen): {
  jsonrpc: '2.0';
  id: unknown;
  result: Record<string, unknown>;
} {
  return {
    jsonrpc: '2.0',
    id: seen.body?.['id'],
    result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' } },
  };
}
