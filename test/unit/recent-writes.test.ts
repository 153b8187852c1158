/**
 * cluster/recent-writes.ts: the writes kept to be sent again after a failover. Over a fake link:
 * what is kept (accepted writes the owner's `keep` keeps, as it rewrites them; not pub/sub, not
 * error replies), the window and the byte bound (a property against a plain model), a pass (every
 * kept write in order; EVAL on NOSCRIPT; a link error stops it and it is tried again), writes held
 * while watching, the watch over a shared generation count (an instance passes again when another's
 * pass changed something, and stops once nothing moves), and close. Then tasks/redis-rewrite.ts:
 * which replies count as a change, the version a kept step names, and the task store's option
 * checks and its listener.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { pack, RecentWrites, type RecentWritesParts, unpack } from '../../src/cluster/recent-writes.js';
import { type RedisLink, type RedisReply, RedisReplyError } from '../../src/cluster/redis-link.js';
import { Script } from '../../src/cluster/scripts.js';
import { InvalidOptionError } from '../../src/errors.js';
import { taskWriteChanged, taskWriteKept } from '../../src/tasks/redis-rewrite.js';
import { ANSWER, CANCEL, CREATE, GET, PAGE, PROGRESS, RENEW, SETTLE } from '../../src/tasks/redis-scripts.js';
import { RedisTaskStore } from '../../src/tasks/redis-store.js';
import { until } from '../helpers/http.js';
import { stall } from '../helpers/stall.js';

/** A link that records what it is sent and answers by `answer` (an Error is thrown); GET/INCR on `counts`. */
class FakeLink implements RedisLink {
  readonly sent: string[][] = [];
  readonly counts: Map<string, number>;
  answer: (args: readonly string[]) => RedisReply | Error = () => 'OK';
  constructor(counts = new Map<string, number>()) {
    this.counts = counts;
  }
  async send(args: readonly string[]): Promise<RedisReply> {
    const [command, key = ''] = args;
    if (command === 'INCR') {
      const n = (this.counts.get(key) ?? 0) + 1;
      this.counts.set(key, n);
      return n;
    }
    if (command === 'GET' && key.startsWith('gen')) return String(this.counts.get(key) ?? 0);
    if (command === 'PEXPIRE' && key.startsWith('gen')) return 1;
    this.sent.push([...args]);
    const a = this.answer(args);
    if (a instanceof Error) throw a;
    return a;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A FakeLink whose every command answers after `delayMs`. */
class SlowLink extends FakeLink {
  readonly #delayMs: number;
  constructor(counts: Map<string, number>, delayMs: number) {
    super(counts);
    this.#delayMs = delayMs;
  }
  override async send(args: readonly string[]): Promise<RedisReply> {
    await new Promise((r) => setTimeout(r, this.#delayMs));
    return super.send(args);
  }
}

const SCRIPT = new Script('return 1');
/** Quick watching for a test: a look every 5 ms, done after 60 ms without a move. */
const QUICK = { pollMs: 5, quietMs: 60 };

function journal(
  o: { windowMs?: number; maxBytes?: number; pollMs?: number; quietMs?: number },
  extra: Partial<RecentWritesParts> = {},
  now = () => Date.now(),
) {
  const errors: unknown[] = [];
  // A script write is kept only when its reply is 1 (as a guarded step that changed something).
  const keep = (s: Script | undefined, a: readonly string[], reply: RedisReply) =>
    s === undefined || reply === 1 ? a : undefined;
  const j = new RecentWrites(
    { ...QUICK, ...o },
    { scripts: [SCRIPT], keep, now, onError: (e) => errors.push(e), ...extra },
  );
  return { j, errors };
}

const idle = (j: RecentWrites) => until(() => !j.stats().watching, 5_000, 'watching ends');

describe('RecentWrites', () => {
  test('options are checked once', () => {
    const bad = [
      { windowMs: 0 },
      { windowMs: 1.5 },
      { maxBytes: -1 },
      { pollMs: 0 },
      { quietMs: Number.NaN },
    ];
    for (const o of bad) assert.throws(() => journal(o), InvalidOptionError, JSON.stringify(o));
    assert.throws(() => new RecentWrites('x' as never, { scripts: [] }), InvalidOptionError);
    assert.doesNotThrow(() => journal({}));
  });

  test('keeps what `keep` keeps of accepted writes, and a pass sends it again in order', async () => {
    const { j } = journal({});
    const store = new FakeLink();
    store.answer = (a) =>
      a[0] === 'BAD' ? new RedisReplyError('ERR wrong') : a[0] === 'EVALSHA' ? Number(a[3]) : 'OK';
    const w = j.over(store);
    await w.send(['SET', 'a', '1']);
    await w.send(['PUBLISH', 'ch', 'x']); // pub/sub: not state
    await w.send(['EVALSHA', SCRIPT.sha, '1', '1']); // kept
    await w.send(['EVALSHA', SCRIPT.sha, '1', '0']); // not kept: changed nothing
    await assert.rejects(w.send(['BAD']), RedisReplyError); // an error reply is no write
    await w.send(['DEL', 'a']);
    assert.equal(j.stats().kept, 3);
    const fresh = new FakeLink();
    fresh.answer = (a) => (a[0] === 'EVALSHA' ? new RedisReplyError('NOSCRIPT No matching script') : 'OK');
    j.failedOver(fresh);
    await idle(j);
    assert.deepEqual(
      fresh.sent,
      [
        ['SET', 'a', '1'],
        ['EVALSHA', SCRIPT.sha, '1', '1'],
        ['EVAL', SCRIPT.source, '1', '1'],
        ['DEL', 'a'],
      ],
      'one pass without a generation key: every kept write in order, EVAL after NOSCRIPT',
    );
    assert.equal(j.stats().passes, 1);
  });

  test('a write sent by EVAL is kept by SHA', async () => {
    const { j } = journal({});
    const store = new FakeLink();
    store.answer = () => 1;
    await j.over(store).send(['EVAL', SCRIPT.source, '1', '1']);
    const fresh = new FakeLink();
    j.failedOver(fresh);
    await idle(j);
    assert.deepEqual(fresh.sent, [['EVALSHA', SCRIPT.sha, '1', '1']]);
  });

  test('a link error stops the pass; it is tried again from the first write', async () => {
    const { j, errors } = journal({});
    const w = j.over(new FakeLink());
    for (const k of ['a', 'b', 'c']) await w.send(['SET', k, '1']);
    const fresh = new FakeLink();
    let down = true;
    fresh.answer = (a) => {
      if (down && a[1] === 'b') {
        down = false;
        return new Error('connection lost');
      }
      return 'OK';
    };
    j.failedOver(fresh);
    await idle(j);
    assert.deepEqual(
      fresh.sent.map((a) => a[1]),
      ['a', 'b', 'a', 'b', 'c'],
    );
    assert.equal(errors.length, 1);
  });

  test('writes older than the window go, but not while watching; the byte bound drops the oldest', async () => {
    let t = 0;
    const { j } = journal({ windowMs: 100, maxBytes: 1_000, quietMs: 40 }, {}, () => t);
    const w = j.over(new FakeLink());
    await w.send(['SET', 'old', '1']);
    t = 150;
    await w.send(['SET', 'new', '1']);
    assert.equal(j.stats().kept, 1, 'the first is past the window');
    // Watching holds what the window had at the failover, whatever its age meanwhile.
    const fresh = new FakeLink();
    let release = (): void => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    fresh.answer = () => held.then(() => 'OK') as never;
    j.failedOver(fresh);
    t = 400;
    await w.send(['SET', 'later', '1']);
    assert.equal(j.stats().kept, 2);
    release();
    t = 10_000; // the watch ends once quiet (the clock moved past quietMs)
    await idle(j);
    t = 10_001;
    await w.send(['SET', 'last', '1']);
    assert.equal(j.stats().kept, 1, 'after watching, the window applies again');
    await w.send(['SET', 'big', 'x'.repeat(2_000)]);
    assert.equal(j.stats().kept, 0, 'a write over the byte bound is not kept, nor what came before');
    assert.equal(j.stats().dropped, 2);
  });

  test('with a generation key: an instance passes again when another pass changed something, then stops', async () => {
    const counts = new Map<string, number>();
    const changed = (_s: Script | undefined, _a: readonly string[], reply: RedisReply) => reply === 'changed';
    const a = journal({}, { generationKey: 'gen', changed }).j;
    const b = journal({}, { generationKey: 'gen', changed }).j;
    const la = new FakeLink(counts);
    const lb = new FakeLink(counts);
    await a.over(la).send(['SET', 'k-a', '1']);
    await b.over(lb).send(['SET', 'k-b', '1']);
    // B's write changes something only once A's has been sent again (A's step comes first).
    let aSent = false;
    la.answer = (args) => {
      aSent = true;
      return args[1] === 'k-a' ? 'changed' : 'same';
    };
    let bChanged = 0;
    lb.answer = () => {
      if (!aSent) return 'same';
      bChanged++;
      return bChanged === 1 ? 'changed' : 'same';
    };
    b.failedOver(lb); // B first: its pass changes nothing yet
    await until(() => b.stats().passes >= 1, 2_000, "B's first pass");
    a.failedOver(la);
    await idle(a);
    await idle(b);
    assert.equal(bChanged >= 1, true, "B passed again after A's pass moved the count");
    assert.ok(b.stats().passes >= 2);
    assert.ok((counts.get('gen') ?? 0) >= 2, 'each pass that changed something counted itself');
  });

  /**
   * A's pass of `writes` kept writes, 25 ms each, after both A and B learn of a failover; B's write
   * changes something only once A's last one is back, so B must still be watching when A's pass ends.
   * `whileA(i)` runs as A's i-th write is answered. Returns how often B changed something, and the
   * beats A's pass counted.
   */
  async function watchedPass(writes: number, whileA: (i: number) => void = () => undefined) {
    const counts = new Map<string, number>();
    const changed = (_s: Script | undefined, _a: readonly string[], reply: RedisReply) => reply === 'changed';
    const a = journal({}, { generationKey: 'gen', changed }).j;
    const b = journal({}, { generationKey: 'gen', changed }).j;
    const la = new SlowLink(counts, 25);
    const lb = new FakeLink(counts);
    const wa = a.over(la);
    for (let i = 0; i < writes; i++) await wa.send(['SET', `k-a${i}`, '1']);
    await b.over(lb).send(['SET', 'k-b', '1']);
    let aDone = false;
    la.answer = (args) => {
      const i = Number(args[1]?.slice('k-a'.length));
      whileA(i);
      if (i === writes - 1) aDone = true;
      return 'changed';
    };
    let bChanged = 0;
    lb.answer = () => {
      if (!aDone) return 'same';
      bChanged++;
      return 'changed';
    };
    a.failedOver(la);
    b.failedOver(lb); // B's first pass changes nothing: A's is on its way
    await idle(a);
    await idle(b);
    return { bChanged, beats: counts.get('gen:beat') ?? 0 };
  }

  test('a pass slower than quietMs: the others watch on while it beats, and pass again after it', async () => {
    // A pass of 10 × 25 ms, four times B's quietMs (60 ms).
    const { bChanged, beats } = await watchedPass(10);
    assert.ok(bChanged >= 1, "B was still watching when A's pass ended, and passed again");
    assert.ok(beats >= 3, "A's pass beat on its way");
  });

  test('a stall of the process longer than quietMs, mid-pass: the watch does not count it as quiet', async () => {
    // The process stops for 200 ms (a long collection, a starved CPU) while A passes: when it runs
    // again, B's overdue poll comes before A's next beat, and B would take its own stall for a quiet
    // count (docs/design.md, "A server's own stall is not blamed on its clients").
    const { bChanged } = await watchedPass(6, (i) => {
      if (i === 2) stall(200);
    });
    assert.ok(bChanged >= 1, "B was still watching when A's pass ended, and passed again");
  });

  test('close stops watching and keeps nothing more', async () => {
    const { j } = journal({ quietMs: 10_000 }, { generationKey: 'gen' });
    const w = j.over(new FakeLink());
    await w.send(['SET', 'a', '1']);
    const fresh = new FakeLink();
    j.failedOver(fresh);
    j.close();
    await w.send(['SET', 'b', '1']);
    await idle(j);
    assert.equal(j.stats().kept, 0);
  });

  test('property: pack and unpack give back any arguments (colons, digits, empty, non-ASCII)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', ':', '12:', '0')), {
          maxLength: 12,
        }),
        (args) => {
          assert.deepEqual(unpack(pack(args)), args);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('property: what is kept is the newest run of writes within the window and the byte bound', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(50), fc.string({ maxLength: 40 })), { maxLength: 60 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 20, max: 800 }),
        async (steps, windowMs, maxBytes) => {
          let t = 0;
          const { j } = journal({ windowMs, maxBytes }, {}, () => t);
          const w = j.over(new FakeLink());
          const model: { at: number; bytes: number }[] = [];
          let dropped = 0;
          for (const [dt, v] of steps) {
            t += dt;
            const args = ['SET', 'k', v];
            await w.send(args);
            model.push({ at: t, bytes: 16 + pack(args).length });
            // The model: drop from the front while too old or over the bound.
            for (;;) {
              const first = model[0];
              const total = model.reduce((n, m) => n + m.bytes, 0);
              if (first === undefined) break;
              const old = first.at < t - windowMs;
              if (!old && total <= maxBytes) break;
              if (!old) dropped++;
              model.shift();
            }
            const s = j.stats();
            assert.equal(s.kept, model.length);
            assert.equal(
              s.bytes,
              model.reduce((n, m) => n + m.bytes, 0),
            );
            assert.equal(s.dropped, dropped);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('RedisTaskStore: its kept writes', () => {
  test('options are checked on every link; a link without onFailover keeps none', () => {
    const plain = new FakeLink();
    for (const bad of [{ windowMs: -1 }, { pollMs: 0 }, 'yes']) {
      assert.throws(
        () => new RedisTaskStore(plain, { recentWrites: bad as never }),
        InvalidOptionError,
        JSON.stringify(bad),
      );
    }
    assert.equal(new RedisTaskStore(plain).recentWrites(), undefined);
  });

  test('on a link that fails over it listens, and close() stops listening', async () => {
    const listeners = new Set<() => void>();
    const link = Object.assign(new FakeLink(), {
      onFailover(l: () => void) {
        listeners.add(l);
        return () => void listeners.delete(l);
      },
    });
    link.answer = (a) => (a[0] === 'ZREM' ? 1 : 'OK');
    const store = new RedisTaskStore(link, { recentWrites: { windowMs: 5_000 } });
    assert.equal(listeners.size, 1);
    assert.deepEqual(store.recentWrites()?.kept, 0);
    assert.equal(new RedisTaskStore(link, { recentWrites: false }).recentWrites(), undefined);
    assert.equal(listeners.size, 1, 'recentWrites: false listens to nothing');
    await store.close();
    assert.equal(listeners.size, 0);
  });
});

describe('taskWriteChanged and taskWriteKept: what counts as a change, and the version a kept step names', () => {
  const fields = (st: string) => ['o', 'p', 's', st];
  const cases: [Script, RedisReply, boolean][] = [
    [CREATE, 1, true],
    [CREATE, 0, false],
    [RENEW, ['c-client', 1], true],
    [RENEW, ['c-client', 2], true],
    [RENEW, ['c-client', 0], false],
    [RENEW, 0, false],
    [PROGRESS, 7, true],
    [PROGRESS, 0, false],
    [SETTLE, ['c-client', '123', 4], true],
    [SETTLE, 0, false],
    [CANCEL, [1, fields('cancelled'), 3], true],
    [CANCEL, [0, fields('completed'), 0], false],
    [CANCEL, null, false],
    [ANSWER, [1, fields('working'), 1, 5], true],
    [ANSWER, [0, fields('input_required'), 1, 4], true],
    [ANSWER, [0, fields('input_required'), 0, 0], false],
    [ANSWER, null, false],
    [GET, [0, fields('working')], false],
    [PAGE, ['a'], false],
  ];
  for (const [script, reply, kept] of cases) {
    test(`${JSON.stringify(reply)} → ${kept ? 'changed' : 'unchanged'}`, () => {
      assert.equal(taskWriteChanged(script, [], reply), kept);
    });
  }
  test('a versioned step is kept naming the version it applied to; others as sent', () => {
    const args = ['EVALSHA', SETTLE.sha, '1', 'sl:task:{t}', '1700', 'R', 'completed'];
    assert.deepEqual(taskWriteKept(SETTLE, args, ['c', '9', 5]), [
      ...args.slice(0, 4),
      '1700:4',
      'R',
      'completed',
    ]);
    assert.equal(taskWriteKept(SETTLE, args, 0), undefined);
    const create = ['EVALSHA', CREATE.sha, '1', 'sl:task:{t}', '1700', '60000'];
    assert.equal(taskWriteKept(CREATE, create, 1), create);
  });
  test('plain commands: a removal that removed something; a live count always (read after a pass)', () => {
    assert.equal(taskWriteChanged(undefined, ['ZREM', 'sl:towner:{o}', 'm'], 1), true);
    assert.equal(taskWriteChanged(undefined, ['DEL', 'sl:task:{t}'], 0), false);
    assert.equal(taskWriteChanged(undefined, ['ZREM', 'sl:tasks:{c}', 'm'], 0), true);
  });
});
