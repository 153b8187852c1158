// Starts a relay of section (i) that is not Sluice (pipe-relay.ts: the byte pipe, or the least
// `node:http` relay) in a process of its own, in front of one server; the section kills it when it
// ends (and it exits on its own when its parent goes away).
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The relay (pipe-relay.ts) in front of the server on `port`; `url(u)` is `u` through it. */
export async function startPipe(
  port: string,
  mode: 'pipe' | 'http' = 'pipe',
): Promise<{ pid: number; url(u: string): string; kill(): void }> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./pipe-relay.js', import.meta.url)), [port, mode], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const at = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${mode} relay: no port within 10 s`)), 10_000);
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve((m as { port: number }).port);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${mode} relay exited (${code})`));
    });
  });
  return {
    pid: child.pid ?? 0,
    url: (u) => {
      const x = new URL(u);
      x.port = String(at);
      return x.toString();
    },
    kill: () => child.kill('SIGKILL'),
  };
}
