/**
 * A TCP proxy the test controls, between a process and a server (e.g. one instance and Redis):
 * `cut()` resets every connection and refuses new ones (a partition the process notices at once),
 * `blackhole()` keeps connections open but forwards nothing (a partition it notices only by
 * timeouts), `restore()` lets traffic through again.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  cut(): void;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let mode: 'pass' | 'cut' | 'blackhole' = 'pass';
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
    client.on('data', (d) => {
      if (mode === 'pass') upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (mode === 'pass') client.write(d);
    });
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
    blackhole() {
      mode = 'blackhole';
    },
    restore() {
      mode = 'pass';
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
