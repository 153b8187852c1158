/**
 * Sluice's own demo tools: streaming-heavy workloads that exercise progress
 * notifications, backpressure, cancellation and server-initiated stream close.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { partialResults } from '../server/partial-results.js';
import { registerSharedTools, type SharedTool, sharedTool } from '../server/shared-tools.js';
import { generateDeltas } from './generate.js';
import { sleep } from './sleep.js';

// Bounds keep a single call from pinning a server for hours or allocating
// unbounded memory; zod turns violations into an isError tool result.
const MAX_DOCS = 10_000_000;
const MAX_FLOOD = 10_000_000;
const MAX_PAYLOAD_BYTES = 1024 * 1024;
const MAX_DELAY_MS = 60_000;
const MAX_SLEEP_MS = 10 * 60_000;
const MAX_WORDS = 10_000_000;
// If the transport accepts notifications without real I/O, awaiting each one
// only yields to microtasks; give the event loop a turn now and then so
// cancellation (socket close) and other sessions are still served.
const YIELD_EVERY = 1024;

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

function toolError(value: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: value }] };
}

// Defined once at module load and registered into each session's McpServer: the zod schemas are
// built here, not per session (src/server/shared-tools.ts; README "Memory per session").
const DEMO_TOOLS: readonly SharedTool[] = [
  sharedTool(
    'reindex',
    {
      description: 'Pretends to reindex a corpus, reporting progress for every document',
      inputSchema: {
        corpus: z.string().describe('Name of the corpus to reindex'),
        docs: z.number().int().min(0).max(MAX_DOCS).default(4096).describe('Number of documents'),
        delayMs: z.number().min(0).max(MAX_DELAY_MS).default(1).describe('Pause between documents, ms'),
      },
    },
    async ({ corpus, docs, delayMs }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= docs; i++) {
        if (extra.signal.aborted) return toolError(`reindex of ${corpus} cancelled after ${i - 1} docs`);
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: {
              progressToken: token,
              progress: i,
              total: docs,
              message: `indexed ${i}/${docs} of ${corpus}`,
            },
          });
        }
        if (delayMs > 0 && i < docs) await sleep(delayMs, extra.signal);
        else if (i % YIELD_EVERY === 0) await yieldToEventLoop();
      }
      return text(`reindexed ${docs} docs`);
    },
  ),
  sharedTool(
    'echo',
    { description: 'Returns its input text', inputSchema: { text: z.string() } },
    ({ text: value }) => text(value),
  ),
  sharedTool(
    'sleep',
    {
      description: 'Waits the given number of milliseconds (cancellable)',
      inputSchema: { ms: z.number().min(0).max(MAX_SLEEP_MS) },
    },
    async ({ ms }, extra) => {
      const completed = await sleep(ms, extra.signal);
      return completed ? text(`slept ${ms} ms`) : toolError(`sleep cancelled`);
    },
  ),
  sharedTool(
    'flood',
    {
      description: 'Sends progress notifications as fast as the transport accepts them',
      inputSchema: {
        count: z.number().int().min(0).max(MAX_FLOOD),
        payloadBytes: z.number().int().min(0).max(MAX_PAYLOAD_BYTES).default(0),
      },
    },
    async ({ count, payloadBytes }, extra) => {
      const token = extra._meta?.progressToken;
      if (token === undefined)
        return toolError('flood sends progress notifications: pass _meta.progressToken');
      const message = payloadBytes > 0 ? 'x'.repeat(payloadBytes) : undefined;
      for (let i = 1; i <= count; i++) {
        if (extra.signal.aborted) return toolError(`flood cancelled after ${i - 1}`);
        await extra.sendNotification({
          method: 'notifications/progress',
          params:
            message === undefined
              ? { progressToken: token, progress: i, total: count }
              : { progressToken: token, progress: i, total: count, message },
        });
        if (i % YIELD_EVERY === 0) await yieldToEventLoop();
      }
      return text(`sent ${count}`);
    },
  ),
  sharedTool(
    'generate',
    {
      description:
        'Streams deterministic text as partial output (one delta per word); the result holds the full text',
      inputSchema: {
        words: z.number().int().min(0).max(MAX_WORDS).default(200).describe('Number of words'),
        delayMs: z.number().min(0).max(MAX_DELAY_MS).default(5).describe('Pause between words, ms'),
        seed: z.number().int().default(1).describe('Same seed, same text'),
      },
    },
    async ({ words, delayMs, seed }, extra) => {
      const out = partialResults(extra);
      let full = '';
      let i = 0;
      for (const delta of generateDeltas(words, seed)) {
        if (extra.signal.aborted) return toolError(`generate cancelled after ${i} words`);
        full += delta;
        await out.text(delta);
        i++;
        if (delayMs > 0 && i < words) await sleep(delayMs, extra.signal);
        else if (i % YIELD_EVERY === 0) await yieldToEventLoop();
      }
      return text(full);
    },
  ),
  sharedTool(
    'test_reconnection',
    { description: 'Closes its own SSE stream mid-call so the client must resume (SEP-1699 polling)' },
    async (extra) => {
      // Only present when the transport can resume the stream; without it the
      // result simply arrives on the original stream.
      extra.closeSSEStream?.();
      await sleep(100, extra.signal);
      return text('Reconnection test completed: result delivered after the stream was closed');
    },
  ),
];

export function registerDemoTools(server: McpServer): void {
  registerSharedTools(server, DEMO_TOOLS);
}
