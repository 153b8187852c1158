// Partial output across cut connections: a loopback proxy drops the path at seeded random byte
// offsets (mid-frame included) while `generate` streams; the client resumes with Last-Event-ID and
// the concatenated deltas must still equal the final text byte for byte: nothing twice, nothing
// missing. 50 cuts with the Sluice client (callToolStream), 50 with the official SDK client's
// plain onprogress. Replay with SLUICE_TRIAL_SEED=<seed>. (Loopback socket buffers hold a whole
// call here, so frames rarely merge; cuts of merged frames are covered by
// test/unit/partial-replay.test.ts, which blocks the socket at will.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { generateText, prng } from '../../src/demo/generate.js';
import type { Served } from '../../src/server/index.js';
import { generateThrough, resumingTransport, startCutDemo } from '../helpers/cut-demo.js';
import type { CutProxy } from '../helpers/cut-proxy.js';
import { withDeadline } from '../helpers/deadline.js';

const CUTS = 50;
const WORDS = 2_500;

/** A request whose response is one of a call's streams: a POST, or a GET resuming a stream. */
function callStream(head: string): boolean {
  return head.startsWith('POST ') || (head.startsWith('GET ') && /\r\nlast-event-id:/i.test(head));
}

for (const kind of ['sluice', 'sdk'] as const) {
  describe(`partial output across ${CUTS} random cuts, ${kind} client`, () => {
    let srv: Served;
    let proxy: CutProxy;
    before(async () => {
      ({ srv, proxy } = await startCutDemo('sse'));
    });
    after(async () => {
      await proxy.close();
      await srv.close();
    });

    test('concatenated deltas equal the final text after every resume', async () => {
      const seed = Number(process.env['SLUICE_TRIAL_SEED'] ?? Date.now() % 1_000_000);
      const rand = prng(seed);
      const client = new Client({ name: 'cuts', version: '1' });
      const url = new URL(proxy.url('/mcp'));
      await withDeadline(client.connect(resumingTransport(kind, url, 20)), 5_000, 'connect');
      let call = 0;
      try {
        while (proxy.cuts < CUTS) {
          call++;
          const label = `call ${call} (SLUICE_TRIAL_SEED=${seed}, ${proxy.cuts} cuts so far)`;
          const callSeed = Math.floor(rand() * 1e6);
          let running = true;
          // Up to 5 cuts per call, each after a random number of bytes of the call's streams
          // (past the first few hundred, so the client holds an event id to resume from). Only the
          // call's streams count: its POST and the GETs that resume them (they carry Last-Event-ID).
          // The session's standalone GET opens without one; its head and priming event (270 bytes)
          // can arrive after the first call's cut is armed, and counted they moved that cut into the
          // POST's response head, where no client holds an event id (a full run of 2026-12-07 failed so).
          const cutter = (async () => {
            for (let i = 0; i < 5 && running && proxy.cuts < CUTS; i++) {
              await proxy.arm(400 + Math.floor(rand() * 60_000), callStream);
            }
          })();
          const { streamed, final } = await generateThrough(
            kind,
            client,
            { words: WORDS, delayMs: 0, seed: callSeed },
            60_000,
            label,
          );
          running = false;
          // A cut still armed when the call ended is dropped: carried over, it could cut the next
          // call's POST before its response head (a leftover count of a few bytes), which no client
          // can resume (it holds no event id) and is not what this test is about. Every call's cuts
          // then fall at least 400 bytes into that call, as the arm above intends.
          proxy.disarm();
          await cutter;
          assert.equal(final, generateText(WORDS, callSeed), `${label}: result`);
          assert.equal(streamed.length, final.length, `${label}: length`);
          assert.equal(streamed, final, `${label}: byte for byte`);
        }
      } finally {
        await client.close().catch(() => {});
      }
      assert.ok(proxy.cuts >= CUTS, `${proxy.cuts} cuts`);
      const stats = srv.handler.stats();
      assert.ok(stats.replays.served > 0, 'resumes happened');
      console.log(
        `# ${kind}: ${call} calls, ${proxy.cuts} cuts, ${stats.replays.served} resumes served, ${stats.partialMerged} deltas merged`,
      );
    });
  });
}
