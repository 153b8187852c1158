/**
 * runSoon: run a callback after the current macrotask and its microtasks, before timers where the
 * runtime allows. The SSE writer batches the frames of one tick with it. Node, Bun and Deno have
 * setImmediate; where it is missing (Workers without nodejs_compat, browsers) a MessageChannel (a
 * macrotask with no timer clamp) stands in, and setTimeout(0) is the last resort. One small module
 * so the core names no runtime.
 */

type Task = () => void;
/** Runs `fn(arg)` once, after the current task (see runSoonFor). */
type RunFor = <T>(fn: (arg: T) => void, arg: T) => void;

/** What the choice depends on (globalThis, or a stand-in in tests). */
export interface SchedulerGlobals {
  setImmediate?: (<A extends unknown[]>(fn: (...args: A) => void, ...args: A) => unknown) | undefined;
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
  runSoonFor: RunFor;
} {
  const immediate = g.setImmediate;
  if (typeof immediate === 'function') {
    return {
      kind: 'setImmediate',
      runSoon: (fn) => void immediate(fn),
      // setImmediate passes the argument itself: no closure per call.
      runSoonFor: (fn, arg) => void immediate(fn, arg),
    };
  }
  const runSoon =
    typeof g.MessageChannel === 'function' ? viaMessageChannel(g.MessageChannel) : timeoutOf(g.setTimeout);
  return {
    kind: typeof g.MessageChannel === 'function' ? 'MessageChannel' : 'setTimeout',
    runSoon,
    runSoonFor: (fn, arg) => runSoon(() => fn(arg)),
  };
}

function timeoutOf(timeout: SchedulerGlobals['setTimeout']): (fn: Task) => void {
  return (fn) => void timeout(fn, 0);
}

const scheduler = pickScheduler(globalThis as unknown as SchedulerGlobals);

/** Schedules fn once, after the current task (setImmediate semantics). */
export const runSoon: (fn: Task) => void = scheduler.runSoon;

/**
 * Schedules `fn(arg)` once, after the current task: an object that schedules itself often (each SSE
 * writer, once per tick with output) passes a shared function and itself instead of keeping a bound
 * closure of its own for its whole life (about 100 bytes per idle stream).
 */
export const runSoonFor: RunFor = scheduler.runSoonFor;
