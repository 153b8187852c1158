// Hibernation under load (option hibernateAfterMs, core/era-2025/wake.ts): several sessions, each
// sending random bursts of concurrent calls, cancels and log-level changes, with servers dropped
// after every answer (0) or after 1 ms, so sleeps and wakes interleave with requests in every order
// the event loop allows. Every request must get its own answer exactly once, every wake must
// succeed, and every session must end asleep (nothing left running, nothing pinned by mistake).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import fc from 'fast-check';
import { z } from 'zod';
import { type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { RawSession, rpc, toolCall, until } from '../helpers/http.js';
import { slowConnect } from '../helpers/slow-connect.js';

const SESSIONS = 8;
const TEXT = z.object({ text: z.string() });
const SLOW = z.object({ ms: z.number().int().min(0).max(50) });

function build(): McpServer {
  const s = new McpServer({ name: 'trials', version: '1' }, { capabilities: { logging: {} } });
  s.registerTool('echo', { inputSchema: TEXT }, ({ text }) => ({ content: [{ type: 'text', text }] }));
  s.registerTool('slow', { inputSchema: SLOW }, async ({ ms }, extra) => {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      extra.signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve();
      });
    });
    return { content: [{ type: 'text', text: `slept ${ms}` }] };
  });
  return s;
}

type Step =
  | { kind: 'burst'; texts: string[] }
  | { kind: 'slow'; ms: number; cancel: boolean }
  | { kind: 'level'; level: 'debug' | 'info' | 'error' }
  | { kind: 'pause'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('burst' as const),
    texts: fc.array(fc.string({ maxLength: 12 }), { minLength: 1, maxLength: 4 }),
  }),
  fc.record({
    kind: fc.constant('slow' as const),
    ms: fc.integer({ min: 0, max: 30 }),
    cancel: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('level' as const), level: fc.constantFrom('debug', 'info', 'error') }),
  fc.record({ kind: fc.constant('pause' as const), ms: fc.integer({ min: 0, max: 5 }) }),
);

/** Runs one session's steps; returns how many requests were answered. */
async function drive(c: RawSession, steps: Step[], tag: string): Promise<number> {
  let answered = 0;
  let n = 0;
  for (const s of steps) {
    if (s.kind === 'burst') {
      const replies = await Promise.all(
        s.texts.map((text) => c.post(toolCall('echo', { text }, `${tag}-${n++}`))),
      );
      replies.forEach((r, i) => {
        assert.equal(r.status, 200, r.text);
        const m = r.isSse ? r.messages().at(-1) : r.json();
        assert.equal(m.result.content[0].text, s.texts[i]);
      });
      answered += replies.length;
    } else if (s.kind === 'slow') {
      const id = `${tag}-${n++}`;
      const call = c.post(toolCall('slow', { ms: s.ms }, id));
      if (s.cancel) {
        const params = { requestId: id, reason: 'trial' };
        assert.equal(
          (await c.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params })).status,
          202,
        );
      }
      const r = await call;
      // A cancelled request gets no response (2025-11-25 basic/utilities/cancellation): an empty
      // stream or 202-less end; one that finished first is answered as usual.
      if (r.text !== '') {
        const m = r.isSse ? r.messages().at(-1) : r.json();
        if (m !== undefined) assert.equal(m.result.content[0].text, `slept ${s.ms}`);
      }
      answered++;
    } else if (s.kind === 'level') {
      const r = await c.post(rpc('logging/setLevel', { level: s.level }, `${tag}-${n++}`));
      assert.equal(r.status, 200, r.text);
      answered++;
    } else {
      await new Promise((r) => setTimeout(r, s.ms));
    }
  }
  return answered;
}

for (const afterMs of [0, 1]) {
  describe(`hibernation trials, hibernateAfterMs ${afterMs}`, () => {
    const open: Served[] = [];
    after(async () => {
      for (const s of open) await s.close({ graceMs: 0 });
    });

    test(`${SESSIONS} sessions, random bursts, cancels and level changes: every request answered once, every wake succeeds`, async () => {
      let built = 0;
      const served = await serve({
        port: 0,
        hibernateAfterMs: afterMs,
        createServer: () => {
          built++;
          // Connecting takes 2 ms (a timer), so messages of a burst arrive while their session wakes.
          return slowConnect(build(), 2);
        },
      });
      open.push(served);
      const plans = fc.sample(fc.array(step, { minLength: 12, maxLength: 24 }), {
        numRuns: SESSIONS,
        seed: 20261205 + afterMs,
      });
      const sessions = await Promise.all(
        plans.map(async () => {
          const c = new RawSession(served.url);
          await c.init();
          return c;
        }),
      );
      const counts = await withDeadline(
        Promise.all(sessions.map((c, i) => drive(c, plans[i] ?? [], `s${i}`))),
        60_000,
        'the trials',
      );
      const requests = plans.reduce(
        (a, p) =>
          a + p.reduce((b, s) => b + (s.kind === 'burst' ? s.texts.length : s.kind === 'pause' ? 0 : 1), 0),
        0,
      );
      assert.equal(
        counts.reduce((a, b) => a + b, 0),
        requests,
      );
      await until(
        () => served.handler.stats().sessions.hibernation.asleep === SESSIONS,
        5_000,
        'every session asleep',
      );
      const h = served.handler.stats().sessions.hibernation;
      assert.equal(h.wakeFailures, 0);
      assert.ok(h.wakes > 0, 'sessions were woken');
      assert.equal(built, SESSIONS + h.wakes, 'a server per session and per wake, no more');
      assert.equal(served.handler.stats().sessions.active, SESSIONS);
    });
  });
}
