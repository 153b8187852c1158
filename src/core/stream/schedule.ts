/**
 * runSoon: run a callback after the current macrotask and its microtasks, before timers where the
 * runtime allows. The SSE writer batches the frames of one tick with it. Node, Bun and Deno have
 * setImmediate; where it is missing (Workers without nodejs_compat, browsers) a MessageChannel (a
 * macrotask with no timer clamp) stands in, and setTimeout(0) is the last resort. One small module
 * so the core names no runtime.
 */

type Task = () => void;

/** What the choice depends on (globalThis, or a stand-in in tests). */
export interface SchedulerGlobals {
  setImmediate?: ((fn: Task) => unknown) | undefined;
  MessageChannel?: (new () => MessageChannel) | undefined;
  setTimeout: (fn: Task, ms: number) => unknown;
}

function viaMessageChannel(Channel: new () => MessageChannel): (fn: Task) => void {
  let queue: Task[] = [];
  let channel: MessageChannel | undefined;
  let posted = false;
  const run = (): void => {
    posted = false;
    const tasks = queue;
    queue = [];
    for (const t of tasks) t();
    // An open port with a listener keeps a runtime's event loop alive (Node, Deno): close it once
    // idle, and open a new one for the next batch.
    if (!posted && channel !== undefined) {
      channel.port1.close();
      channel.port2.close();
      channel = undefined;
    }
  };
  return (fn) => {
    queue.push(fn);
    if (posted) return;
    posted = true;
    if (channel === undefined) {
      channel = new Channel();
      channel.port1.onmessage = run;
    }
    channel.port2.postMessage(0);
  };
}

/** The scheduler for these globals, and which mechanism it uses. */
export function pickScheduler(g: SchedulerGlobals): {
  kind: 'setImmediate' | 'MessageChannel' | 'setTimeout';
  runSoon: (fn: Task) => void;
} {
  const immediate = g.setImmediate;
  if (typeof immediate === 'function') return { kind: 'setImmediate', runSoon: (fn) => void immediate(fn) };
  if (typeof g.MessageChannel === 'function') {
    return { kind: 'MessageChannel', runSoon: viaMessageChannel(g.MessageChannel) };
  }
  const timeout = g.setTimeout;
  return { kind: 'setTimeout', runSoon: (fn) => void timeout(fn, 0) };
}

/** Schedules fn once, after the current task (setImmediate semantics). */
export const runSoon: (fn: Task) => void = pickScheduler(globalThis as unknown as SchedulerGlobals).runSoon;
