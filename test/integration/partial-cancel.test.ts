// Cancellation reaches the producer (issue 21, item 11): a tool that only awaits its partial-output
// sends must stop once its call is cancelled. Before, `await out.text()` kept resolving after a
// `notifications/cancelled` (2025 era) or a closed response (2026-07-28 era), so such a tool produced
// for nobody until it ended by itself; now the next send, and a send still waiting for room, reject
// with PartialCancelledError.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PartialCancelledError, partialResults, type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { notification, RawSession, toolCall, until } from '../helpers/http.js';
import { modernBody, modernOpen } from '../helpers/modern.js';

/** What the flood tool saw: how far it got, and how it ended. */
interface Outcome {
  sent: number;
  /** `sent` when the test cancelled. */
  sentAtCancel?: number;
  ended?: unknown;
}

/** Up to this many deltas; far more than a cancelled call may send (the test cancels early). */
const MAX_DELTAS = 2_000_000;

describe('partial output after a cancellation', () => {
  let served: Served;
  const outcomes = new Map<string, Outcome>();
  before(async () => {
    served = await serve({
      host: '127.0.0.1',
      port: 0,
      keepaliveMs: 0,
      createServer: () => {
        const server = new McpServer({ name: 'flood', version: '1' });
        server.registerTool('flood', {}, async (extra) => {
          const label = String(extra._meta?.progressToken);
          const o: Outcome = { sent: 0 };
          outcomes.set(label, o);
          const out = partialResults(extra);
          try {
            // Awaits its sends and nothing else: the sends alone must stop it.
            for (; o.sent < MAX_DELTAS; o.sent++) await out.text('word ');
            o.ended = 'finished';
          } catch (e) {
            o.ended = e;
          }
          return { content: [{ type: 'text', text: 'done' }] };
        });
        return server;
      },
    });
  });
  after(() => served.close());

  async function stopped(label: string): Promise<Outcome> {
    await until(() => outcomes.get(label)?.ended !== undefined, 10_000, `${label}: the tool ended`);
    const o = outcomes.get(label);
    assert.ok(o !== undefined);
    return o;
  }

  function assertCancelled(o: Outcome): void {
    assert.ok(o.ended instanceof PartialCancelledError, `ended with ${String(o.ended)}`);
    assert.equal((o.ended as PartialCancelledError).code, 'SLUICE_PARTIAL_CANCELLED');
    assert.ok(o.sent < MAX_DELTAS, 'stopped long before its end');
  }

  for (const reader of ['reading', 'paused'] as const) {
    test(`2025 era, ${reader} reader: notifications/cancelled makes the next send reject`, async () => {
      const s = new RawSession(served.url);
      await s.init();
      const label = `legacy-${reader}`;
      const p = await s.postOpen(toolCall('flood', {}, label, label), { accept: 'text/event-stream' });
      await p.waitFor((r) => r.messages().length > 0, 10_000, 'first delta');
      if (reader === 'paused') p.res.pause();
      const o = outcomes.get(label);
      assert.ok(o !== undefined);
      o.sentAtCancel = o.sent;
      const c = await s.post(notification('notifications/cancelled', { requestId: label, reason: 'test' }));
      assert.equal(c.status, 202);
      assertCancelled(await stopped(label));
      p.destroy();
      await s.delete();
    });
  }

  test('2026-07-28 era: closing the response makes the next send reject', async () => {
    const label = 'modern';
    const p = await modernOpen(
      served.url,
      modernBody('tools/call', { name: 'flood', arguments: {} }, { progressToken: label }, label),
    );
    await p.waitFor((r) => r.messages().length > 0, 10_000, 'first delta');
    p.destroy();
    assertCancelled(await stopped(label));
  });
});

describe('partialResults outside a Sluice request', () => {
  test('an aborted signal rejects every send (handled, so a tool that does not await gets no unhandled rejection)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => {
      unhandled.push(e);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const ac = new AbortController();
      const sent: unknown[] = [];
      const out = partialResults({
        _meta: { progressToken: 't' },
        signal: ac.signal,
        sendNotification: (async (m: unknown) => {
          sent.push(m);
        }) as never,
      });
      await out.text('before');
      assert.equal(sent.length, 1);
      ac.abort(new Error('cancelled by test'));
      await assert.rejects(out.text('after'), PartialCancelledError);
      await assert.rejects(
        out.content({ type: 'image', data: '', mimeType: 'image/png' }),
        PartialCancelledError,
      );
      void out.text('dropped, not awaited');
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(unhandled, []);
      assert.equal(sent.length, 1, 'nothing sent after the abort');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('a send waiting for room rejects when the call is cancelled', async () => {
    const ac = new AbortController();
    const out = partialResults({
      _meta: { progressToken: 't' },
      signal: ac.signal,
      // A transport that never has room again.
      sendNotification: (() => new Promise<void>(() => {})) as never,
    });
    const pending = out.text('stuck');
    ac.abort();
    await withDeadline(assert.rejects(pending, PartialCancelledError), 2_000, 'pending send');
  });
});
