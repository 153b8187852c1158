/**
 * The watchdog of test/helpers/reaper.ts, run as a child with an IPC channel and the path of its
 * parent's registry as its argument. When the channel drops (its parent died: the runner's per-file
 * timeout ends a file with a signal, and no 'exit' hook of the file runs then), it reads which
 * processes are still registered, signals each, SIGKILLs what is still there after a grace period,
 * removes the registry and exits. The registry is a file its parent appends to synchronously, so a
 * child registered just before the parent was killed is not lost in an unsent message.
 */
import { readFileSync, rmSync } from 'node:fs';
import { startTime } from './reaper.js';

const GRACE_MS = 3_000;
const registry = process.argv[2] ?? '';

interface Watched {
  signal: NodeJS.Signals;
  group: boolean;
  /** When it started (reaper.ts startTime), '-' when unknown. */
  started: string;
}

/** Lines `watch PID SIGNAL STARTED [group]` and `gone PID`, in order: what was watched and is not gone. */
function registered(): Map<number, Watched> {
  const live = new Map<number, Watched>();
  let text = '';
  try {
    text = readFileSync(registry, 'utf8');
  } catch {
    return live;
  }
  for (const line of text.split('\n')) {
    const [kind, pid, signal, started, group] = line.split(' ');
    if (kind === 'watch' && pid !== undefined) {
      live.set(Number(pid), {
        signal: (signal ?? 'SIGTERM') as NodeJS.Signals,
        group: group === 'group',
        started: started ?? '-',
      });
    } else if (kind === 'gone' && pid !== undefined) live.delete(Number(pid));
  }
  return live;
}

function signalled(pid: number, w: Watched, signal: NodeJS.Signals): void {
  // Another process that took the pid since: not ours to stop.
  if (w.started !== '-' && startTime(pid) !== w.started) return;
  try {
    process.kill(w.group ? -pid : pid, signal);
  } catch {
    // Gone already (or its group is): nothing to stop.
  }
}

function done(): void {
  rmSync(registry, { force: true });
  process.exit(0);
}

function parentGone(): void {
  const live = registered();
  if (live.size === 0) {
    done();
    return;
  }
  for (const [pid, w] of live) signalled(pid, w, w.signal);
  setTimeout(() => {
    for (const [pid, w] of live) signalled(pid, w, 'SIGKILL');
    done();
  }, GRACE_MS);
}

// A parent killed while this module was still loading dropped the channel before the listener was
// there: then act at once.
if (!process.connected) parentGone();
else {
  // Only a 'message' listener keeps a child's channel referenced: hold it, or this would exit at once.
  process.channel?.ref();
  process.once('disconnect', parentGone);
}
