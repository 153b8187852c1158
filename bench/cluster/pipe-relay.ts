// The relays of section (i) that are not Sluice, each in a process of its own in front of one
// `sluice serve`, against which the forwarded case's ratio is read. Started by the section with
// `fork` (its port goes back over IPC); it exits when its parent goes away, so it never outlives
// the run.
//
// `pipe` (the default): each client connection gets one connection to the target, and bytes are
// copied both ways unread. No HTTP parsing, no routing, no signing: the floor under any relay that
// runs in a process of its own over loopback TCP (the kernel's two extra writes per exchange and
// an event loop's turn).
//
// `http`: the least a relay built on `node:http` does when it must read the request before it
// forwards (as Sluice's does, to find the owner and sign the body): a `node:http` server reads the
// body, copies the headers but the hop-by-hop ones, and replays the request on a keep-alive
// `Agent`; the answer's head is copied and its body piped back. No routing, no signature.
import { Agent, createServer as createHttpServer, type IncomingHttpHeaders, request } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';

const targetPort = Number(process.argv[2]);
const mode = process.argv[3] ?? 'pipe';
if (!Number.isInteger(targetPort) || targetPort <= 0)
  throw new Error('pipe-relay: a target port is required');
if (mode !== 'pipe' && mode !== 'http') throw new Error(`pipe-relay: unknown mode '${mode}'`);

function join(a: Socket, b: Socket): void {
  a.setNoDelay(true);
  b.setNoDelay(true);
  a.pipe(b);
  b.pipe(a);
  const end = (): void => {
    a.destroy();
    b.destroy();
  };
  for (const s of [a, b]) {
    s.once('error', end);
    s.once('close', end);
  }
}

/** RFC 9110 §7.6.1, and the length the relay sets itself. */
const HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'upgrade',
  'trailer',
  'content-length',
]);

function copied(from: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const k in from) {
    const v = from[k];
    if (v !== undefined && !HOP.has(k)) out[k] = v;
  }
  return out;
}

function httpRelay(): Server {
  const agent = new Agent({ keepAlive: true, maxSockets: 1_024, maxFreeSockets: 64, scheduling: 'lifo' });
  return createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => {
      const body = Buffer.concat(chunks);
      const headers = copied(req.headers);
      if (body.length > 0 || req.method === 'POST') headers['content-length'] = String(body.length);
      const up = request({
        hostname: '127.0.0.1',
        port: targetPort,
        path: req.url,
        method: req.method,
        headers,
        agent,
      });
      up.once('response', (answer) => {
        res.writeHead(answer.statusCode ?? 502, copied(answer.headers));
        answer.pipe(res);
      });
      up.once('error', () => res.destroy());
      res.once('close', () => {
        if (!res.writableFinished) up.destroy();
      });
      up.end(body.length > 0 ? body : undefined);
    });
  });
}

const server: Server =
  mode === 'http' ? httpRelay() : createServer((client) => join(client, connect(targetPort, '127.0.0.1')));
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.send?.({ port: typeof a === 'object' && a !== null ? a.port : 0 });
});
process.once('disconnect', () => process.exit(0));
