/**
 * A loopback proxy that "dies after forwarding": a request whose bytes `shouldCut` picks is passed to
 * the server, and then the client's connection is reset before any response byte (the server's answer
 * is read and dropped). To the client this is a connection lost after its request went out: the
 * server may have run it. Everything else passes both ways untouched.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface RequestCutProxy {
  /** The target's URL with the proxy's port. */
  readonly url: string;
  /** Requests cut so far. */
  cuts(): number;
  close(): Promise<void>;
}

export async function requestCutProxy(
  target: { port: number; url: string },
  shouldCut: (request: string) => boolean,
): Promise<RequestCutProxy> {
  const sockets = new Set<Socket>();
  let cuts = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    let dead = false;
    client.on('data', (chunk: Buffer) => {
      if (dead) return;
      if (shouldCut(chunk.toString('latin1'))) {
        dead = true;
        // Forward the request, then die before any response byte: the server has it, the client
        // sees its connection reset.
        upstream.write(chunk, () => {
          cuts++;
          client.resetAndDestroy();
        });
        upstream.removeAllListeners('data');
        upstream.on('data', () => undefined);
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!dead) client.write(chunk);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', () => {
      if (!dead) upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: target.url.replace(`:${target.port}/`, `:${port}/`),
    cuts: () => cuts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
