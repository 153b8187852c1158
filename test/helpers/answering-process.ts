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

const SENDER = `let line = '';
process.stdin.setEncoding('utf8').on('data', (d) => {
  line += d;
  if (!line.endsWith('\\n')) return;
  const { port, host, text } = JSON.parse(line);
  let answer = '';
  const s = require('net').connect(port, host, () => s.write(text));
  s.setEncoding('utf8').on('data', (d) => {
    answer += d;
    if (answer.includes('\\r\\n')) { console.log(answer.split('\\r\\n')[0]); process.exit(0); }
  });
});
console.log('ready');`;

/**
 * A client in a process of its own that, once told, connects to `host:port` and writes `text`, and
 * prints the first line of what comes back: it connects and sends while the test's process (a
 * server's) is stalled, so the connection waits unaccepted and its bytes unread, the way a client's
 * request meets a server that stalled.
 */
export async function sendingProcess(): Promise<{
  send(port: number, host: string, text: string): void;
  /** The first line of the answer. */
  answer(): Promise<string>;
  close(): void;
}> {
  const child = spawn(process.execPath, ['-e', SENDER], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  /** The `n`th line it printed (from 0), once whole. */
  const line = (n: number, label: string) =>
    withDeadline(
      new Promise<string>((resolve) => {
        const look = (): void => {
          const lines = out.split('\n');
          if (lines.length - 1 > n) resolve(lines[n] as string);
          else setTimeout(look, 10);
        };
        look();
      }),
      10_000,
      label,
    );
  try {
    await line(0, 'the sending process');
  } catch (error) {
    child.kill();
    throw error;
  }
  return {
    send: (port, host, text) => child.stdin?.write(`${JSON.stringify({ port, host, text })}\n`),
    answer: () => line(1, 'the answer the sending process got'),
    close: () => child.kill('SIGKILL'),
  };
}
