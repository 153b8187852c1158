/**
 * runSoon: run a callback after the current macrotask and its microtasks, before timers where the
 * runtime allows. The SSE writer batches the frames of one tick with it. Node and Bun have
 * setImmediate; Deno's user code and workerd do not, so a MessageChannel (a macrotask with no
 * timer clamp) stands in, and setTimeout(0) is the last resort. One small module so the core
 * names no runtime.
 */

type Task = () => void;

function viaMessageChannel(): ((fn: Task) => void) | undefined {
  if (typeof MessageChannel !== 'function') return undefined;
  let queue: Task[] = [];
  let channel: MessageChannel | undefined;
  let posted = false;
  const run = (): void => {
    posted = false;
    const tasks = queue;
    queue = [];
    for (const t of tasks) t();
  };
  return (fn) => {
    queue.push(fn);
    if (posted) return;
    posted = true;
    if (channel === undefined) {
      channel = new MessageChannel();
      channel.port1.onmessage = run;
    }
    channel.port2.postMessage(0);
  };
}

function pick(): (fn: Task) => void {
  const g = globalThis as { setImmediate?: (fn: Task) => unknown };
  const immediate = g.setImmediate;
  if (typeof immediate === 'function') return (fn) => void immediate(fn);
  return (
    viaMessageChannel() ??
    ((fn) => {
      setTimeout(fn, 0);
    })
  );
}

/** Schedules fn once, after the current task (setImmediate semantics). */
export const runSoon: (fn: Task) => void = pick();
