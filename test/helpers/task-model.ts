/**
 * The model of the task lifecycle test (test/cluster/task-lifecycle-model): what a task may read as
 * at each moment (SEP-2663, docs/tasks.md "The wire"), the steps fast-check draws (each through one of
 * two instances), and the final check once every tool was let go.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { JsonRpcCode as C } from '../../src/jsonrpc/codes.js';
import { until } from './http.js';
import { modernSend } from './modern.js';
import { createTask, getTask, type ToolProbe, taskBody } from './tasks.js';

/** Every wait on the servers (a tool starting, a result settling) has this deadline. */
const WAIT_MS = 5_000;

type Status = 'working' | 'input_required' | 'completed' | 'cancelled';
type Key = 'first' | 'second';

interface ModelTask {
  readonly id: string;
  /** The task's name: `slow`'s gate, the prefix of the names an `ask` task is answered with. */
  readonly gate: string;
  /** `slow` waits for its gate; `ask` asks for two answers (an MRTR round), then answers with them. */
  readonly kind: 'slow' | 'ask';
  /** An `ask` task's answers acknowledged so far (the first answer to a key is the one kept). */
  readonly answers: Partial<Record<Key, string>>;
  /** The tool was let go: `slow`'s gate opened, or every one of `ask`'s questions answered. */
  released: boolean;
  /** A cancel was acknowledged, and whether the tool had been let go before it. */
  cancelled: { afterRelease: boolean } | undefined;
  /** What the task was first read as once finished: it must read so for ever after. */
  final: Status | undefined;
}

export interface Model {
  tasks: ModelTask[];
}

export interface Real {
  readonly urls: readonly [string, string];
  readonly probe: ToolProbe;
}

let gates = 0;
/** What the runs did, for the log: a property that never reached a case tests nothing of it. */
export const tally = {
  created: 0,
  asked: 0,
  bothAtOnce: 0,
  raced: 0,
  completed: 0,
  cancelled: 0,
  cancelledAfterRelease: 0,
};

/** The statuses a task may be read as now. */
function allowed(t: ModelTask): readonly Status[] {
  if (t.final !== undefined) return [t.final];
  if (t.cancelled !== undefined) return t.cancelled.afterRelease ? ['cancelled', 'completed'] : ['cancelled'];
  if (t.released) return ['working', 'completed'];
  return t.kind === 'ask' ? ['working', 'input_required'] : ['working'];
}

const unanswered = (t: ModelTask): Key[] =>
  (['first', 'second'] as const).filter((k) => t.answers[k] === undefined);

/** What the tool answers: `slow` its gate, `ask` the names it was given. */
const resultText = (t: ModelTask): string =>
  t.kind === 'slow' ? `done ${t.gate}` : `answers ${t.answers.first},${t.answers.second} state round-1`;

function checkRead(
  t: ModelTask,
  read: { result?: { status?: string; result?: unknown; inputRequests?: object }; error?: unknown },
  where: string,
): void {
  const r = read.result;
  assert.ok(r !== undefined, `${where}: tasks/get answered ${JSON.stringify(read)}`);
  const status = r.status as Status;
  assert.ok(
    allowed(t).includes(status),
    `${where}: ${t.gate} read ${status}, allowed ${allowed(t).join('|')}`,
  );
  if (status === 'completed') {
    assert.deepEqual(
      (r.result as { content?: unknown } | undefined)?.content,
      [{ type: 'text', text: resultText(t) }],
      `${where}: the result inline`,
    );
  }
  // Answered questions leave inputRequests; the others stay (docs/tasks.md, `tasks/update`).
  if (status === 'input_required') {
    assert.deepEqual(
      Object.keys(r.inputRequests ?? {}).sort(),
      unanswered(t),
      `${where}: ${t.gate} asks what is open`,
    );
  }
  if (status === 'completed' || status === 'cancelled') t.final = status;
}

class Create implements fc.AsyncCommand<Model, Real> {
  readonly via: 0 | 1;
  readonly kind: ModelTask['kind'];
  constructor(via: 0 | 1, kind: ModelTask['kind']) {
    this.via = via;
    this.kind = kind;
  }
  check(m: Readonly<Model>): boolean {
    return m.tasks.length < 10;
  }
  async run(m: Model, r: Real): Promise<void> {
    const gate = `g${++gates}`;
    const created = await createTask(r.urls[this.via], this.kind, this.kind === 'slow' ? { gate } : {});
    assert.equal(created.status, 'working');
    tally.created++;
    m.tasks.push({
      id: String(created.taskId),
      gate,
      kind: this.kind,
      answers: {},
      released: false,
      cancelled: undefined,
      final: undefined,
    });
  }
  toString(): string {
    return `create ${this.kind} via ${this.via}`;
  }
}

/** A step on one of the tasks created so far (`pick` modulo their number), through instance `via`. */
abstract class OnTask implements fc.AsyncCommand<Model, Real> {
  readonly pick: number;
  readonly via: 0 | 1;
  constructor(pick: number, via: 0 | 1) {
    this.pick = pick;
    this.via = via;
  }
  check(m: Readonly<Model>): boolean {
    return m.tasks.length > 0;
  }
  protected task(m: Model): ModelTask {
    return m.tasks[this.pick % m.tasks.length] as ModelTask;
  }
  abstract run(m: Model, r: Real): Promise<void>;
}

class Get extends OnTask {
  async run(m: Model, r: Real): Promise<void> {
    const t = this.task(m);
    checkRead(t, await getTask(r.urls[this.via], t.id), `get via ${this.via}`);
  }
  override toString(): string {
    return `get #${this.pick} via ${this.via}`;
  }
}

class Cancel extends OnTask {
  async run(m: Model, r: Real): Promise<void> {
    const t = this.task(m);
    const ack = await modernSend(r.urls[this.via], taskBody('tasks/cancel', { taskId: t.id }));
    assert.deepEqual(ack.json(), { jsonrpc: '2.0', id: ack.json().id, result: { resultType: 'complete' } });
    if (t.final === undefined && t.cancelled === undefined) t.cancelled = { afterRelease: t.released };
    // Straight after the acknowledgement, through the other instance too.
    const other = this.via === 0 ? 1 : 0;
    checkRead(t, await getTask(r.urls[other], t.id), `get after cancel via ${other}`);
  }
  override toString(): string {
    return `cancel #${this.pick} via ${this.via}`;
  }
}

/** Lets a task's tool finish: waits (bounded) until it runs, then opens its gate. */
class Release extends OnTask {
  async run(m: Model, r: Real): Promise<void> {
    const t = this.task(m);
    if (t.released || t.cancelled !== undefined) return;
    await letGo(r, t, this.via, unanswered(t));
  }
  override toString(): string {
    return `release #${this.pick}`;
  }
}

/** Lets a task's tool finish and cancels it at the same moment: either may win, and then stays. */
class Race extends OnTask {
  /** The gate opens this long after the cancel was sent: either may reach the store first. */
  readonly delayMs: number;
  constructor(pick: number, via: 0 | 1, delayMs: number) {
    super(pick, via);
    this.delayMs = delayMs;
  }
  async run(m: Model, r: Real): Promise<void> {
    const t = this.task(m);
    if (t.released || t.cancelled !== undefined) return;
    // Ready to be let go at once: `slow` running, `ask` asking.
    if (t.kind === 'slow')
      await until(() => r.probe.gates.has(t.gate), WAIT_MS, `the tool of ${t.gate} running`);
    else await asking(r, t);
    if (t.final !== undefined) return;
    const [ack] = await Promise.all([
      modernSend(r.urls[this.via], taskBody('tasks/cancel', { taskId: t.id })),
      new Promise<void>((res) => setTimeout(res, this.delayMs)).then(() =>
        letGo(r, t, this.via === 0 ? 1 : 0, unanswered(t), false),
      ),
    ]);
    assert.deepEqual(ack.json().result, { resultType: 'complete' });
    t.cancelled = { afterRelease: true };
    tally.raced++;
  }
  override toString(): string {
    return `cancel #${this.pick} via ${this.via} and release it ${this.delayMs} ms later`;
  }
}

/** Answers one of an `ask` task's questions, through instance `via`. */
class Answer extends OnTask {
  readonly key: Key;
  constructor(pick: number, via: 0 | 1, key: Key) {
    super(pick, via);
    this.key = key;
  }
  async run(m: Model, r: Real): Promise<void> {
    const t = this.task(m);
    if (t.kind !== 'ask' || t.released || t.cancelled !== undefined || t.answers[this.key] !== undefined)
      return;
    await letGo(r, t, this.via, [this.key]);
  }
  override toString(): string {
    return `answer ${this.key} of #${this.pick} via ${this.via}`;
  }
}

/**
 * Answers an `ask` task's two questions at the same moment, one through each instance: whichever
 * update lands last resumes the round, and the round runs once (checked when the runs settle).
 */
class AnswerBoth extends OnTask {
  async run(m: Model, r: Real): Promise<void> {
    const t = this.task(m);
    if (t.kind !== 'ask' || t.released || t.cancelled !== undefined || unanswered(t).length < 2) return;
    await asking(r, t);
    await Promise.all([letGo(r, t, 0, ['first'], false), letGo(r, t, 1, ['second'], false)]);
    tally.bothAtOnce++;
  }
  override toString(): string {
    return `answer both of #${this.pick} at once`;
  }
}

class Forged implements fc.AsyncCommand<Model, Real> {
  readonly id: string;
  readonly via: 0 | 1;
  constructor(id: string, via: 0 | 1) {
    this.id = id;
    this.via = via;
  }
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    // A drawn id could only name a task by a collision with 128 random bits.
    if (m.tasks.some((t) => t.id === this.id)) return;
    const read = await getTask(r.urls[this.via], this.id);
    assert.equal(read.error?.code, C.InvalidParams, `an unknown task id: ${JSON.stringify(read)}`);
  }
  toString(): string {
    return `get ${JSON.stringify(this.id)} via ${this.via}`;
  }
}

/** Waits (bounded) until an `ask` task reads `input_required`, or finished (then `final` is set). */
async function asking(r: Real, t: ModelTask): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const read = await getTask(r.urls[0], t.id);
    checkRead(t, read, `${t.gate} waiting to be asked`);
    if (read.result?.status === 'input_required' || t.final !== undefined) return;
    assert.ok(Date.now() < deadline, `${t.gate} never asked within ${WAIT_MS} ms`);
    await new Promise((res) => setTimeout(res, 5));
  }
}

/**
 * Lets the tool go on: opens `slow`'s gate once it runs, or answers `ask`'s questions `keys` in one
 * `tasks/update` through `via` once it asks. `wait`: first wait until it is ready (a race has).
 */
async function letGo(r: Real, t: ModelTask, via: 0 | 1, keys: readonly Key[], wait = true): Promise<void> {
  if (t.kind === 'slow') {
    if (wait) await until(() => r.probe.gates.has(t.gate), WAIT_MS, `the tool of ${t.gate} running`);
    r.probe.gates.get(t.gate)?.();
    t.released = true;
    return;
  }
  if (wait) await asking(r, t);
  const inputResponses: Record<string, unknown> = {};
  for (const k of keys) inputResponses[k] = { action: 'accept', content: { name: `${t.gate}${k[0]}` } };
  const ack = await modernSend(r.urls[via], taskBody('tasks/update', { taskId: t.id, inputResponses }));
  assert.deepEqual(ack.json().result, { resultType: 'complete' }, `tasks/update of ${t.gate}: ${ack.text}`);
  for (const k of keys) t.answers[k] ??= `${t.gate}${k[0]}`;
  t.released = unanswered(t).length === 0;
}

const via = fc.constantFrom<0 | 1>(0, 1);
export const commands = fc.commands(
  [
    via.map((v) => new Create(v, 'slow')),
    via.map((v) => new Create(v, 'ask')),
    fc.tuple(fc.nat(), via, fc.constantFrom<Key>('first', 'second')).map(([p, v, k]) => new Answer(p, v, k)),
    fc.nat().map((p) => new AnswerBoth(p, 0)),
    fc.tuple(fc.nat(), via).map(([p, v]) => new Get(p, v)),
    fc.tuple(fc.nat(), via).map(([p, v]) => new Get(p, v)),
    fc.tuple(fc.nat(), via).map(([p, v]) => new Cancel(p, v)),
    fc.nat().map((p) => new Release(p, 0)),
    fc.nat().map((p) => new Release(p, 0)),
    fc.tuple(fc.nat(), via, fc.integer({ min: 0, max: 4 })).map(([p, v, d]) => new Race(p, v, d)),
    fc
      .tuple(fc.oneof(fc.string({ maxLength: 40 }), fc.base64String({ minLength: 20, maxLength: 60 })), via)
      .map(([id, v]) => new Forged(id, v)),
  ],
  // 'medium': runs of some 10-30 steps, not fast-check's default handful.
  { maxCommands: 30, size: 'medium' },
);

/** After the steps: every tool let go, then every task ends as the model says; each tool ran once. */
export async function settle(m: Model, r: Real): Promise<void> {
  for (const t of m.tasks) if (!t.released && t.cancelled === undefined) await letGo(r, t, 0, unanswered(t));
  for (const [i, t] of m.tasks.entries()) {
    const url = r.urls[i % 2] as string;
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const read = await getTask(url, t.id);
      checkRead(t, read, `settling ${t.gate}`);
      if (t.final !== undefined) break;
      assert.ok(Date.now() < deadline, `${t.gate} still ${read.result?.status} after ${WAIT_MS} ms`);
      await new Promise((res) => setTimeout(res, 10));
    }
    if (t.cancelled !== undefined && !t.cancelled.afterRelease) {
      assert.equal(t.final, 'cancelled', `${t.gate}: cancelled before its tool finished`);
    }
    if (t.kind === 'ask') {
      // The answered round ran once when the task completed, never when cancelled before it.
      const round = r.probe.runs.get(`ask ${t.gate}f,${t.gate}s`);
      if (t.final === 'completed') assert.equal(round, 1, `${t.gate}: the answered round ran once`);
      if (t.cancelled?.afterRelease === false)
        assert.equal(round, undefined, `${t.gate}: no round after cancel`);
    } else if (t.cancelled !== undefined && !t.cancelled.afterRelease) {
      await until(
        () => r.probe.aborted.includes(t.gate),
        WAIT_MS,
        `the tool of ${t.gate} saw its AbortSignal`,
      );
    }
    if (t.cancelled === undefined) assert.equal(t.final, 'completed', `${t.gate}: let go, never cancelled`);
    if (t.kind === 'slow') assert.equal(r.probe.runs.get(t.gate), 1, `the tool of ${t.gate} ran once`);
    else tally.asked++;
    if (t.final === 'completed') tally.completed++;
    else tally.cancelled++;
    if (t.final === 'cancelled' && t.cancelled?.afterRelease === true) tally.cancelledAfterRelease++;
  }
}

export function report(t: { diagnostic(s: string): void }): void {
  t.diagnostic(`tasks ${JSON.stringify(tally)}`);
  assert.ok(tally.completed > 0 && tally.cancelled > 0 && tally.raced > 0, 'the runs reached every ending');
  for (const k of Object.keys(tally) as (keyof typeof tally)[]) tally[k] = 0;
}
