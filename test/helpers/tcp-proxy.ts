/**
 * A TCP proxy the test controls, between a process and a server (e.g. one instance and Redis):
 * `cut()` resets every connection and refuses new ones (a partition the process notices at once),
 * `stall()` keeps connections open and stops reading from either side, so bytes wait in the
 * kernel's buffers as they do behind a peer that stopped answering or a route that went silent (a
 * partition the process notices only by its own deadlines; TCP never drops them), `restore()`
 * lets traffic through again, the held bytes first and in order.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  cut(): void;
  stall(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let mode: 'pass' | 'cut' | 'stall' = 'pass';
  const pairs = new Set<[Socket, Socket]>();
  const server: Server = createServer((client) => {
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => client.write(d));
    if (mode === 'stall') {
      client.pause();
      upstream.pause();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  return {
    port,
    cut() {
      mode = 'cut';
      for (const [c, u] of [...pairs]) {
        c.resetAndDestroy();
        u.destroy();
      }
      pairs.clear();
    },
    stall() {
      mode = 'stall';
      for (const [c, u] of pairs) {
        c.pause();
        u.pause();
      }
    },
    restore() {
      mode = 'pass';
      for (const [c, u] of pairs) {
        c.resume();
        u.resume();
      }
    },
    async close() {
      for (const [c, u] of [...pairs]) {
        c.destroy();
        u.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
