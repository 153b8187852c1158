// The outbound queue merges partial output and never loses any of it: for any interleaving of
// pushes (text deltas of two requests, counter progress, other frames) and drains, the text read
// back per request, in order, equals what was pushed, the sequence markers are contiguous, and
// event ids on the wire stay increasing (what makes a resume from any delivered id exact).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createParser } from 'eventsource-parser';
import { prng } from '../../src/demo/generate.js';
import { OutboundQueue } from '../../src/flow/outbound-queue.js';
import { PartialFrame } from '../../src/flow/partial-frame.js';
import { escapeJsonText, PARTIAL_META_KEY, PartialTemplate } from '../../src/jsonrpc/partial.js';
import { encodeJsonFrame } from '../../src/sse/encode.js';

const ALPHABET = ['a', 'b', ' ', '\n', '"', '\\', 'é', '日', '🚰', '\u2028', '\0'];

test('any interleaving of pushes and drains preserves each request’s concatenated text (500 seeded runs)', () => {
  const seed = Number(process.env['SLUICE_TRIAL_SEED'] ?? Date.now() % 1_000_000);
  for (let run = 0; run < 500; run++) {
    const rand = prng(seed * 1000 + run);
    const q = new OutboundQueue();
    const owners = [{}, {}];
    const templates = [new PartialTemplate('progress', 'tA'), new PartialTemplate('sep', 7)];
    const pushed = ['', ''];
    const next = [0, 0];
    let eventId = 0;
    let wire = '';
    const steps = 1 + Math.floor(rand() * 200);
    for (let i = 0; i < steps; i++) {
      const r = rand();
      if (r < 0.6) {
        const k = rand() < 0.5 ? 0 : 1;
        let delta = '';
        const len = 1 + Math.floor(rand() * 5);
        for (let j = 0; j < len; j++) delta += ALPHABET[Math.floor(rand() * ALPHABET.length)];
        pushed[k] += delta;
        const id = `t.1.${(++eventId).toString(36)}`;
        q.pushPartial(
          new PartialFrame(
            templates[k] as PartialTemplate,
            owners[k] as object,
            id,
            next[k] as number,
            1,
            escapeJsonText(delta),
          ),
        );
        next[k] = (next[k] as number) + 1;
      } else if (r < 0.75) {
        const id = `t.1.${(++eventId).toString(36)}`;
        q.push(
          encodeJsonFrame(
            id,
            `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"c","progress":${i}}}`,
          ),
          'sc',
        );
      } else if (r < 0.85) {
        const id = `t.1.${(++eventId).toString(36)}`;
        q.push(
          encodeJsonFrame(
            id,
            '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}',
          ),
        );
      } else {
        wire += q.drain();
      }
    }
    wire += q.drain();
    const got = ['', ''];
    const expect = [0, 0];
    let lastId = 0;
    const p = createParser({
      onEvent: (e) => {
        const idNum = Number.parseInt((e.id ?? '').split('.')[2] ?? '', 36);
        assert.ok(idNum > lastId, `run ${run} (seed ${seed}): ids increase on the wire`);
        lastId = idNum;
        const m = JSON.parse(e.data) as { method: string; params: Record<string, unknown> };
        const marker = (m.params['_meta'] as Record<string, { seq: number; n: number }> | undefined)?.[
          PARTIAL_META_KEY
        ];
        if (marker === undefined) return;
        const k = m.method === 'notifications/progress' ? 0 : 1;
        assert.equal(marker.seq, expect[k], `run ${run} (seed ${seed}): contiguous sequence`);
        expect[k] = (expect[k] as number) + marker.n;
        got[k] +=
          k === 0
            ? (m.params['message'] as string)
            : ((m.params['content'] as { text: string }[])[0]?.text ?? '');
      },
    });
    p.feed(wire);
    assert.equal(got[0], pushed[0], `run ${run} (seed ${seed}): request A text`);
    assert.equal(got[1], pushed[1], `run ${run} (seed ${seed}): request B text`);
    assert.deepEqual(expect, next, `run ${run}: every delta accounted for`);
  }
});

test('deltas queued back to back merge into one frame with the newest id and the counted span', () => {
  const q = new OutboundQueue();
  const t = new PartialTemplate('progress', 'tok');
  const owner = {};
  for (let i = 0; i < 5; i++)
    q.pushPartial(new PartialFrame(t, owner, `x.1.${i + 1}`, i, 1, escapeJsonText(`w${i} `)));
  assert.equal(q.count, 1);
  assert.equal(q.merged, 4);
  const frame = q.drain();
  assert.match(frame, /^id: x\.1\.5\n/);
  const data = JSON.parse(frame.split('data: ')[1] ?? '') as { params: Record<string, unknown> };
  assert.equal(data.params['message'], 'w0 w1 w2 w3 w4 ');
  assert.equal(data.params['progress'], 5);
  assert.deepEqual((data.params['_meta'] as Record<string, unknown>)[PARTIAL_META_KEY], { seq: 0, n: 5 });
});

test('a frame between deltas stops the merge: nothing moves behind a frame it preceded', () => {
  const q = new OutboundQueue();
  const t = new PartialTemplate('progress', 'tok');
  const owner = {};
  q.pushPartial(new PartialFrame(t, owner, 'x.1.1', 0, 1, 'a'));
  q.push('id: x.1.2\ndata: {}\n\n');
  q.pushPartial(new PartialFrame(t, owner, 'x.1.3', 1, 1, 'b'));
  assert.equal(q.count, 3);
  const ids = [...q.drain().matchAll(/^id: (\S+)$/gm)].map((m) => m[1]);
  assert.deepEqual(ids, ['x.1.1', 'x.1.2', 'x.1.3']);
});
