// A byte pipe between a client and one `sluice serve` (section (i), the *pipe* case): each client
// connection gets one connection to the target, and bytes are copied both ways unread. No HTTP
// parsing, no routing, no signing: it is the floor under any relay that runs in a process of its
// own over loopback TCP (the kernel's two extra writes per exchange and an event loop's turn),
// which the forwarded case's ratio is read against. Started by the section with `fork` (its port
// goes back over IPC); it exits when its parent goes away, so it never outlives the run.
import { connect, createServer, type Socket } from 'node:net';

const targetPort = Number(process.argv[2]);
if (!Number.isInteger(targetPort) || targetPort <= 0)
  throw new Error('pipe-relay: a target port is required');

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

const server = createServer((client) => join(client, connect(targetPort, '127.0.0.1')));
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.send?.({ port: typeof a === 'object' && a !== null ? a.port : 0 });
});
process.once('disconnect', () => process.exit(0));
