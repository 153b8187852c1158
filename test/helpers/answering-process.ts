/**
 * A TCP peer in a process of its own that answers `+OK\r\n` to every write: it answers while the
 * test's process is stalled (a busy loop), so the answer waits unread in the test's socket — what a
 * stall past a deadline looks like to the code under test (flow/late-deadline.ts).
 */
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { withDeadline } from './deadline.js';

const SERVER =
  "require('net').createServer((s) => s.on('data', () => s.write('+OK\\r\\n'))).listen(0, '127.0.0.1', function () { console.log(this.address().port) })";

export async function answeringProcess(): Promise<{ socket: Socket; close: () => void }> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await withDeadline(
      new Promise<number>((resolve) => child.stdout?.once('data', (b: Buffer) => resolve(Number(String(b))))),
      10_000,
      'the answering process',
    );
    const socket = connect(port, '127.0.0.1');
    await withDeadline(new Promise((r) => socket.once('connect', r)), 5_000, 'the connection');
    return {
      socket,
      close: () => {
        socket.destroy();
        child.kill();
      },
    };
  } catch (error) {
    child.kill();
    throw error;
  }
}
