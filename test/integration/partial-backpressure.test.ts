// A reader paused for 10 s while a tool produces 4 MB of partial text: the tool is slowed to the
// reader's pace (it cannot run ahead by more than the queue's high-water mark plus socket buffers),
// the queue stays bounded, and once the reader resumes every byte arrives, in order, equal to the
// result. Correctness, not speed: progress is measured in bytes, not wall time.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createParser } from 'eventsource-parser';
import { z } from 'zod';
import { PARTIAL_META_KEY } from '../../src/jsonrpc/partial.js';
import { createTasks, partialResults, type Served, serve } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { dechunk, RawSession, rawPost, sleep, toolCall } from '../helpers/http.js';
import { modernBody, modernHeaders } from '../helpers/modern.js';
import { DECLARED } from '../helpers/tasks.js';

const TOTAL = 4 * 1024 * 1024;
const CHUNK = 1024;
const HWM = 64 * 1024;

/** Deterministic chunk i: ASCII plus escapes and multi-byte characters. */
function chunk(i: number): string {
  const head = `#${i} "q" \\ é 日 🚰\n`;
  return head + 'x'.repeat(CHUNK - head.length);
}

let produced = 0;

function spewServer(): McpServer {
  const server = new McpServer({ name: 'spew', version: '1' }, { capabilities: {} });
  server.registerTool('spew', { inputSchema: { chunks: z.number().int() } }, async ({ chunks }, extra) => {
    const out = partialResults(extra);
    let full = '';
    for (let i = 0; i < chunks; i++) {
      const c = chunk(i);
      full += c;
      await out.text(c);
      produced += c.length;
    }
    return { content: [{ type: 'text', text: full }] };
  });
  return server;
}

let srv: Served;
/** The same server with the tasks extension: `spew` is `optional`, held for a minute before it would become a task. */
let held: Served;
before(async () => {
  held = await serve({
    createServer: () => spewServer() as never,
    host: '127.0.0.1',
    port: 0,
    keepaliveMs: 0,
    highWaterMark: HWM,
    maxQueueBytes: 1024 * 1024,
    tasks: createTasks({ tools: { spew: 'optional' }, taskAfterMs: 60_000 }),
  });
  srv = await serve({
    createServer: () => spewServer() as never,
    host: '127.0.0.1',
    port: 0,
    mode: 'sse',
    keepaliveMs: 0,
    highWaterMark: HWM,
    maxQueueBytes: 1024 * 1024,
  });
});
after(() => Promise.all([srv.close(), held.close()]));

test('paused reader, 4 MB of text: the tool waits, memory stays bounded, nothing is lost', async () => {
  const s = new RawSession(srv.url);
  await s.init();
  const chunks = TOTAL / CHUNK;
  const sock = connect(srv.port, '127.0.0.1');
  const received: Buffer[] = [];
  const head = new Promise<void>((resolve, reject) => {
    sock.on('data', (d: Buffer) => {
      received.push(d);
      if (Buffer.concat(received).includes('\r\n\r\n')) resolve();
    });
    sock.on('error', reject);
  });
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  produced = 0;
  sock.write(
    rawPost(
      srv.port,
      s.headers({ accept: 'text/event-stream' }),
      JSON.stringify(toolCall('spew', { chunks }, 'sp', 'tok')),
    ),
  );
  await withDeadline(head, 5_000, 'response head');
  sock.pause();
  let maxQueued = 0;
  const sampler = setInterval(() => {
    maxQueued = Math.max(maxQueued, srv.handler.stats().queue.bytes);
  }, 5);
  let producedAt2s = 0;
  try {
    await sleep(2_000);
    producedAt2s = produced;
    await sleep(8_000);
  } finally {
    clearInterval(sampler);
  }
  const producedPaused = produced;
  const readPaused = received.reduce((n, b) => n + b.length, 0);
  // The tool ran ahead of the reader by at most the queue's high-water mark, one frame, and what
  // the sockets buffer (kernel send + receive buffers on loopback: a few MB at most).
  assert.ok(
    producedPaused < TOTAL,
    `the tool was held back: ${producedPaused} of ${TOTAL} bytes while paused`,
  );
  assert.equal(producedPaused, producedAt2s, 'no progress at all between 2 s and 10 s of the pause');
  assert.ok(maxQueued <= HWM + 2 * CHUNK + 1024, `queue bounded: ${maxQueued} bytes`);
  sock.resume();
  await withDeadline(closed, 60_000, 'stream end');
  const all = Buffer.concat(received);
  const body = dechunk(all.subarray(all.indexOf('\r\n\r\n') + 4)).toString('utf8');
  let streamed = '';
  let next = 0;
  let final = '';
  const p = createParser({
    onEvent: (e) => {
      if (e.data === '') return;
      const m = JSON.parse(e.data) as {
        id?: string;
        method?: string;
        params?: Record<string, unknown>;
        result?: { content: { text: string }[] };
      };
      if (m.id === 'sp') final = m.result?.content[0]?.text ?? '';
      const marker = (m.params?.['_meta'] as Record<string, { seq: number; n: number }> | undefined)?.[
        PARTIAL_META_KEY
      ];
      if (marker === undefined) return;
      assert.equal(marker.seq, next, 'contiguous deltas');
      next += marker.n;
      streamed += m.params?.['message'] as string;
    },
  });
  p.feed(body);
  assert.equal(next, chunks, 'every delta accounted for');
  assert.equal(final.length, TOTAL);
  assert.equal(streamed, final, 'byte for byte');
  assert.ok(srv.handler.stats().partialMerged > 0, 'deltas merged while the socket was blocked');
  console.log(
    `# paused: produced ${producedPaused} B of ${TOTAL} (read ${readPaused} B), max queue ${maxQueued} B, merged ${srv.handler.stats().partialMerged}`,
  );
});

/**
 * A 2026-07-28 `spew` of 4 MiB to a reader paused for 1.5 s: the tool is held back, then every delta
 * arrives, contiguous (none replaced), byte for byte the result.
 */
async function pausedModernReader(target: Served, meta: Record<string, unknown>): Promise<void> {
  const chunks = TOTAL / CHUNK; // 4 MiB: beyond the queue and what loopback socket buffers hold
  const sock = connect(target.port, '127.0.0.1');
  const received: Buffer[] = [];
  const head = new Promise<void>((resolve, reject) => {
    sock.on('data', (d: Buffer) => {
      received.push(d);
      if (Buffer.concat(received).includes('\r\n\r\n')) resolve();
    });
    sock.on('error', reject);
  });
  const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
  produced = 0;
  const body = modernBody(
    'tools/call',
    { name: 'spew', arguments: { chunks } },
    { progressToken: 'tok', ...meta },
    'm1',
  );
  sock.write(
    rawPost(target.port, modernHeaders(body, { accept: 'text/event-stream' }), JSON.stringify(body)),
  );
  await withDeadline(head, 5_000, 'response head');
  sock.pause();
  await sleep(1_500);
  const producedPaused = produced;
  sock.resume();
  await withDeadline(closed, 60_000, 'stream end');
  assert.ok(producedPaused < chunks * CHUNK, `the tool was held back: ${producedPaused} B while paused`);
  const all = Buffer.concat(received);
  const text = dechunk(all.subarray(all.indexOf('\r\n\r\n') + 4)).toString('utf8');
  let streamed = '';
  let next = 0;
  let final = '';
  const p = createParser({
    onEvent: (e) => {
      if (e.data === '') return;
      const m = JSON.parse(e.data) as {
        id?: string;
        params?: Record<string, unknown>;
        result?: { content: { text: string }[] };
      };
      if (m.id === 'm1') final = m.result?.content[0]?.text ?? '';
      const marker = (m.params?.['_meta'] as Record<string, { seq: number; n: number }> | undefined)?.[
        PARTIAL_META_KEY
      ];
      if (marker === undefined) return;
      assert.equal(marker.seq, next, 'contiguous deltas: none replaced');
      next += marker.n;
      streamed += m.params?.['message'] as string;
    },
  });
  p.feed(text);
  assert.equal(next, chunks, 'every delta accounted for');
  assert.equal(final.length, chunks * CHUNK);
  assert.equal(streamed, final, 'byte for byte');
}

// The same on a 2026-07-28 request (no session: deltas go out through extra.sendNotification). Its
// frames must never be coalesced like ordinary progress: a blocked socket slows the tool instead.
test('2026-07-28 request, paused reader: every delta arrives, none replaced, the tool waits', () =>
  pausedModernReader(srv, {}));

// From a client that declared the tasks extension the call is held for taskAfterMs (tasks/task-after.ts):
// the tool answers into the task's capture, which relays each delta to the client's response and tells
// the tool's writer when that response is full, so the tool is slowed the same way and nothing is lost.
test('2026-07-28, a call held before it would become a task, paused reader: the same', () =>
  pausedModernReader(held, DECLARED));
