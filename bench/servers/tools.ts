// The benchmark's tools, registered on an official SDK `McpServer`. The Sluice and SDK server
// children both serve this factory, so any difference between them is transport cost; the raw
// server (raw.ts) answers the same calls with precomputed bytes.
//
// - echo  {text}                              → text content `text`
// - flood {count, payloadBytes, yieldEvery?}  → `count` notifications/progress for the request's
//   progressToken, each awaited, each with a `message` of payloadBytes bytes; then text
//   `sent <count>`. `yieldEvery` > 0 adds a setImmediate every that many events (only the
//   slow-consumer test uses it, so that a transport without backpressure flushes at all, as
//   in the baseline's slow-consumer run, docs/benchmarks.md). The loop stops early when the request's signal is aborted.
// - sleep {ms}                                → waits, then text `slept <ms>`.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { sharedJsonSchemaValidator } from '../../src/server/shared-validator.js';

/** Upper bounds for tool arguments, so a typo cannot make a child run for hours. */
const MAX_COUNT = 50_000_000;
const MAX_PAYLOAD = 1 << 20;
const MAX_SLEEP_MS = 60_000;

// The input schemas are built once and shared by every session's McpServer. Raw shapes
// (`inputSchema: { text: z.string() }`) would make each session build its own zod objects (about
// 25 KiB of heap per session for these three tools), which is the application's cost, not the
// transport's, and would hide the transport's own per-session memory in (c).
const ECHO_INPUT = z.object({ text: z.string() });
const FLOOD_INPUT = z.object({
  count: z.number().int().min(0).max(MAX_COUNT),
  payloadBytes: z.number().int().min(0).max(MAX_PAYLOAD).default(0),
  yieldEvery: z.number().int().min(0).default(0),
});
const SLEEP_INPUT = z.object({ ms: z.number().int().min(0).max(MAX_SLEEP_MS) });

function text(value: string): { content: { type: 'text'; text: string }[] } {
  return { content: [{ type: 'text', text: value }] };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

// Likewise one JSON-schema validator for every session: each SDK Server otherwise builds its own
// Ajv instance (~20 KiB of heap per session), again the application's choice, applied equally to
// the Sluice and SDK children (README "Memory per session").
const VALIDATOR = sharedJsonSchemaValidator();

/** A fresh `McpServer` with the three bench tools (one per session). */
export function createBenchServer(): McpServer {
  const server = new McpServer(
    { name: 'sluice-bench', version: '1.0.0' },
    { jsonSchemaValidator: VALIDATOR },
  );

  server.registerTool(
    'echo',
    { description: 'Returns its text argument.', inputSchema: ECHO_INPUT },
    ({ text: value }) => text(value),
  );

  server.registerTool(
    'flood',
    {
      description: 'Sends `count` progress notifications, then returns.',
      inputSchema: FLOOD_INPUT,
    },
    async ({ count, payloadBytes, yieldEvery }, extra) => {
      const progressToken = extra._meta?.progressToken;
      const message = 'x'.repeat(payloadBytes);
      if (progressToken !== undefined) {
        for (let progress = 1; progress <= count && !extra.signal.aborted; progress++) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, total: count, message },
          });
          if (yieldEvery > 0 && progress % yieldEvery === 0) {
            await new Promise<void>((resolve) => setImmediate(resolve));
          }
        }
      }
      return text(`sent ${count}`);
    },
  );

  server.registerTool(
    'sleep',
    {
      description: 'Waits `ms` milliseconds.',
      inputSchema: SLEEP_INPUT,
    },
    async ({ ms }, extra) => {
      await sleep(ms, extra.signal);
      return text(`slept ${ms}`);
    },
  );

  return server;
}
