/**
 * Runs the real `sluice serve` binary (the compiled CLI) as a child process, so
 * a test exercises exactly what a user starts: argument parsing, the demo
 * server and the single "listening" line scripts wait for.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withDeadline } from './deadline.js';
import { reapWithMe } from './reaper.js';

export interface SpawnedServe {
  /** The endpoint URL the server announced, e.g. http://127.0.0.1:41077/mcp. */
  url: string;
  /** With `--redis`: the instance id it joined as and how many other instances it saw then. */
  cluster?: { incarnation: string; peers: number | undefined };
  child: ChildProcess;
  /** The most recent stderr output (bounded), for failure messages. */
  stderr(): string;
  /** SIGTERM, then SIGKILL if it has not exited in time. Idempotent. */
  close(): Promise<void>;
}

const READY_LINE =
  /^sluice listening on (https?:\/\/127\.0\.0\.1:\d+\/\S*?)(?:, joined the cluster as (\S+) \((?:(\d+) other instances? seen|other instances unknown)\))?$/;
const START_DEADLINE_MS = 15_000;
const EXIT_DEADLINE_MS = 5_000;
const STDERR_KEEP = 16 * 1024;

/** The repository root: the nearest ancestor holding the `sluice` package.json (works from src or dist). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      const parsed: unknown = JSON.parse(readFileSync(pkg, 'utf8'));
      if (typeof parsed === 'object' && parsed !== null && 'name' in parsed && parsed.name === 'sluice') {
        return dir;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('spawnServe: cannot find the sluice repository root');
    dir = parent;
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts `node dist/src/cli/main.js serve --port 0 …args` and resolves once it
 * prints its listening line. `args` are appended, so a later `--port` wins.
 */
export async function spawnServe(
  args: string[] = [],
  env: Record<string, string> = {},
  startDeadlineMs = START_DEADLINE_MS,
  onStderr?: (chunk: string) => void,
): Promise<SpawnedServe> {
  const cli = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');
  if (!existsSync(cli)) throw new Error(`spawnServe: ${cli} is missing — run 'npm run build' first`);
  return spawnListening(process.execPath, [cli, 'serve', '--port', '0', ...args], {
    env,
    startMs: startDeadlineMs,
    ...(onStderr === undefined ? {} : { onStderr }),
  });
}

/**
 * Starts any command that prints `sluice serve`'s listening line (the runtime entry scripts in
 * test/runtimes do) and resolves once it did. With `group`, the child leads its own process
 * group and close() signals the whole group, so helpers it starts (miniflare's workerd) go with it.
 */
export async function spawnListening(
  command: string,
  args: string[],
  options: {
    group?: boolean;
    startMs?: number;
    env?: Record<string, string>;
    /**
     * Every stderr chunk from the moment of spawning. A server may take requests (and log them)
     * before it prints its listening line (with `--redis` it first counts its peers), so a test
     * that reads the logs must listen from here, not from the resolved promise.
     */
    onStderr?: (chunk: string) => void;
  } = {},
): Promise<SpawnedServe> {
  const group = options.group ?? false;
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: repoRoot(),
    detached: group,
    // Deno looks for a newer release at dl.deno.land on start: traffic off the machine (tests reach only loopback).
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', ...options.env },
  });
  reapWithMe(child, 'SIGTERM', group);
  const signal = (sig: NodeJS.Signals): void => {
    if (group && child.pid !== undefined) {
      try {
        process.kill(-child.pid, sig);
        return;
      } catch {
        // the group is gone already; fall through to the child itself
      }
    }
    child.kill(sig);
  };
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEEP);
    options.onStderr?.(chunk);
  });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signal('SIGTERM');
      try {
        await withDeadline(exited(child), EXIT_DEADLINE_MS, 'sluice serve exiting after SIGTERM');
      } catch {
        signal('SIGKILL');
        await withDeadline(exited(child), EXIT_DEADLINE_MS, 'sluice serve exiting after SIGKILL');
      }
    })();
    return closing;
  };

  const ready = new Promise<RegExpExecArray>((resolve, reject) => {
    let stdout = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      stdout += chunk;
      for (const line of stdout.split('\n').slice(0, -1)) {
        const match = READY_LINE.exec(line.trim());
        if (match?.[1] !== undefined) resolve(match);
        else reject(new Error(`sluice serve printed an unexpected stdout line: ${JSON.stringify(line)}`));
      }
      stdout = stdout.slice(stdout.lastIndexOf('\n') + 1);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      reject(new Error(`sluice serve exited before listening (code ${code}, signal ${signal}):\n${stderr}`));
    });
  });

  try {
    const m = await withDeadline(
      ready,
      options.startMs ?? START_DEADLINE_MS,
      `${command} printing its listening line`,
    );
    const url = m[1] as string;
    const incarnation = m[2];
    const cluster =
      incarnation === undefined
        ? undefined
        : { incarnation, peers: m[3] === undefined ? undefined : Number(m[3]) };
    return cluster === undefined
      ? { url, child, stderr: () => stderr, close }
      : { url, cluster, child, stderr: () => stderr, close };
  } catch (err) {
    await close();
    throw err;
  }
}
