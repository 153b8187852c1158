// json mode keeps order and completeness of a request's related notifications, which travel on the
// GET stream while the response travels on the POST:
// - progress produced while the GET stream is reconnecting is stored and replayed, not dropped;
// - the JSON response never overtakes the request's last progress (clients stop listening for a
//   request's progress once its response is in).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { prng } from '../../src/demo/generate.js';
import type { Served } from '../../src/server/index.js';
import { resumingTransport, startCutDemo } from '../helpers/cut-demo.js';
import type { CutProxy } from '../helpers/cut-proxy.js';
import { withDeadline } from '../helpers/deadline.js';
import { sleep } from '../helpers/http.js';

async function connect(url: string, kind: 'sluice' | 'sdk'): Promise<Client> {
  const client = new Client({ name: 'json-order', version: '1' });
  await withDeadline(client.connect(resumingTransport(kind, new URL(url), 50)), 5_000, 'connect');
  // The GET stream opens after initialization; give it a moment so progress has a stream to use.
  await sleep(100);
  return client;
}

for (const kind of ['sdk', 'sluice'] as const) {
  describe(`json mode, ${kind} client`, () => {
    let srv: Served;
    let proxy: CutProxy;
    before(async () => {
      ({ srv, proxy } = await startCutDemo('json'));
    });
    after(async () => {
      await proxy.close();
      await srv.close();
    });

    test('every progress event arrives before the response (2,000 events, no pause)', async () => {
      const client = await connect(proxy.url('/mcp'), kind);
      try {
        for (let round = 0; round < 3; round++) {
          const seen: number[] = [];
          const coalescedBefore = srv.handler.stats().coalesced;
          await withDeadline(
            client.callTool(
              { name: 'reindex', arguments: { corpus: 'c', docs: 2_000, delayMs: 0 } },
              undefined,
              {
                timeout: 60_000,
                onprogress: (p) => seen.push(p.progress),
              },
            ),
            60_000,
            `reindex round ${round}`,
          );
          // Counter-style progress may be coalesced (newest wins) on a blocked socket; everything
          // else must be here before the response: delivered + replaced = produced.
          const coalesced = srv.handler.stats().coalesced - coalescedBefore;
          assert.equal(
            seen.length + coalesced,
            2_000,
            `round ${round}: ${seen.length} of 2,000 before the response (${coalesced} coalesced)`,
          );
          assert.equal(seen.at(-1), 2_000, 'the last progress arrives before the response');
        }
      } finally {
        await client.close();
      }
    });

    test('progress produced while the GET stream reconnects is replayed, none lost (seeded cuts)', async () => {
      const seed = Number(process.env['SLUICE_TRIAL_SEED'] ?? Date.now() % 1_000_000);
      const rand = prng(seed);
      const client = await connect(proxy.url('/mcp'), kind);
      try {
        const seen: number[] = [];
        const before = proxy.cuts;
        const statsBefore = srv.handler.stats();
        let running = true;
        const cutter = (async () => {
          while (running && proxy.cuts - before < 5) {
            await proxy.arm(200 + Math.floor(rand() * 20_000), (line) => line.startsWith('GET'));
          }
        })();
        await withDeadline(
          client.callTool(
            { name: 'reindex', arguments: { corpus: 'c', docs: 2_000, delayMs: 1 } },
            undefined,
            {
              timeout: 60_000,
              onprogress: (p) => seen.push(p.progress),
            },
          ),
          60_000,
          `reindex (SLUICE_TRIAL_SEED=${seed})`,
        );
        running = false;
        void cutter;
        assert.ok(proxy.cuts - before >= 1, 'the GET stream was cut at least once');
        const stats = srv.handler.stats();
        assert.equal(stats.undeliverable - statsBefore.undeliverable, 0, 'nothing counted undeliverable');
        // Counter progress may still be coalesced (newest wins) if the reader lags; nothing else may go.
        const coalesced = stats.coalesced - statsBefore.coalesced;
        assert.equal(seen.length + coalesced, 2_000, `${seen.length} of 2,000 (SLUICE_TRIAL_SEED=${seed})`);
        assert.equal(seen.at(-1), 2_000);
        assert.ok(
          seen.every((p, i) => i === 0 || p > (seen[i - 1] ?? 0)),
          'in order, none twice',
        );
      } finally {
        await client.close();
      }
    });
  });
}
