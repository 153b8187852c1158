/**
 * A loopback TCP proxy that cuts connections at chosen byte offsets of the server→client direction:
 * arm(n) destroys the connection that carries the n-th byte from now (mid-frame, mid-chunk, wherever
 * it falls), both sides at once, as a dropped network path would. Used to test resumption.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

export interface CutProxy {
  url(path: string): string;
  readonly port: number;
  /**
   * Cuts the connection carrying the n-th server→client byte from now (counting only connections
   * whose latest request head — its request line and headers, as sent — passes `filter`); resolves
   * when it happened.
   */
  arm(n: number, filter?: (requestHead: string) => boolean): Promise<void>;
  /**
   * Drops a cut still armed (its `arm` promise resolves, no connection is cut): what it counted
   * belonged to a call that ended, and carried over it would cut the next call's response at any
   * offset, its head included, where no client holds an event id to resume from.
   */
  disarm(): void;
  /** Connections cut so far. */
  readonly cuts: number;
  close(): Promise<void>;
}

export async function startCutProxy(upstreamPort: number): Promise<CutProxy> {
  const sockets = new Set<Socket>();
  let armed: { left: number; filter: ((line: string) => boolean) | undefined; done: () => void } | undefined;
  let cuts = 0;
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(upstreamPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    let head = '';
    const kill = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (d: Buffer) => {
      // The newest request's head: with keep-alive, the response now flowing answers the latest request.
      // (Clients here write a request's head in one piece, and no body starts with a request line.)
      if (/^[A-Z]+ \S+ HTTP\/1\.1\r\n/.test(d.toString('latin1', 0, Math.min(d.length, 200)))) {
        const end = d.indexOf('\r\n\r\n');
        head = d.toString('latin1', 0, end < 0 ? d.length : end);
      }
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      const a = armed;
      if (a !== undefined && (a.filter === undefined || a.filter(head))) {
        if (d.length >= a.left) {
          // Deliver the bytes before the cut point, then drop the path.
          if (a.left > 0) client.write(d.subarray(0, a.left));
          armed = undefined;
          cuts++;
          kill();
          a.done();
          return;
        }
        a.left -= d.length;
      }
      client.write(d);
    });
    client.on('error', kill);
    upstream.on('error', kill);
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    arm(n, filter) {
      return new Promise((resolve) => {
        armed = { left: n, filter, done: resolve };
      });
    },
    disarm() {
      const a = armed;
      armed = undefined;
      a?.done();
    },
    get cuts() {
      return cuts;
    },
    async close() {
      armed = undefined;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
