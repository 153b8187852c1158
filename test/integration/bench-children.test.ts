/**
 * `npm run bench`'s server children still answer: each kind of section (a) (raw, Sluice, the SDK's
 * own transport, and the SDK's McpServer on a bare transport, bench/servers/sdk-bare.ts) in JSON
 * mode and the bare transport in SSE mode too, and section (h)'s bare hosts (bench/modern/server.ts)
 * beside one Sluice and the SDK v2 handler: a few echo calls each, checked as the benchmark checks
 * them. Measuring is the benchmark's business; this keeps its harness from rotting between runs.
 * Each child costs about half a CPU-second to start, so not every combination runs here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Pool } from 'undici';
import { echoSmoke, MODERN_KINDS } from '../../bench/modern/section.js';
import { launch, type ServerKind } from '../../bench/servers/launch.js';
import { callEcho, closeSession, openSession } from '../../bench/wire.js';

const CALLS = 5;
const WAIT_MS = 10_000;

describe('the benchmark children answer echo calls', () => {
  const kinds: ServerKind[] = ['raw', 'sluice', 'sdk', 'sdk-bare'];
  for (const kind of kinds) {
    for (const mode of kind === 'sdk-bare' ? (['json', 'sse'] as const) : (['json'] as const)) {
      test(`section (a): ${kind}, ${mode}`, { timeout: 60_000 }, async () => {
        const server = await launch({ kind, mode });
        const url = new URL(server.url);
        const pool = new Pool(url.origin, { connections: 1, headersTimeout: WAIT_MS, bodyTimeout: WAIT_MS });
        try {
          const session = await openSession(pool, url.pathname, server.headers);
          for (let id = 1; id <= CALLS; id++)
            assert.equal(await callEcho(pool, url.pathname, session, id), undefined);
          await closeSession(pool, url.pathname, session);
        } finally {
          await pool.close();
          await server.close();
        }
      });
    }
  }

  for (const kind of ['bare', 'bare-shared', 'sluice', 'sdk2']) {
    assert.ok(MODERN_KINDS.includes(kind), `section (h) has a ${kind} server`);
    test(`section (h): ${kind}`, { timeout: 60_000 }, async () => {
      await echoSmoke(kind, CALLS);
    });
  }
});
