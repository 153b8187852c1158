// Graceful shutdown seen from Sluice's client: a call in flight across a server shutdown and a
// restart on the same port completes (when it may be re-sent) or fails with a typed error, and
// never hangs.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { idempotencyMeta, StreamableHttpClientTransport } from '../../src/client/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { sleep } from '../helpers/http.js';
import { startServer } from '../helpers/test-server.js';

describe('shutdown and restart with the client transport', () => {
  test('a call in flight across a shutdown and a restart on the same port completes or fails typed, never hangs', async () => {
    const first = await startServer({ streamAfterMs: 50 });
    const port = first.port;
    const client = new Client({ name: 'shutdown-test', version: '1' });
    const transport = new StreamableHttpClientTransport(new URL(first.url), { maxReconnectAttempts: 5 });
    await client.connect(transport);
    after(() => client.close().catch(() => undefined));

    // Not marked idempotent: after the restart its stream cannot be resumed (new process, 404),
    // so it must fail with a typed client error.
    const plain = client.callTool({ name: 'slow', arguments: { ms: 1_500 } }, CallToolResultSchema, {
      timeout: 15_000,
    });
    // Marked idempotent: re-sent on the new session, so it completes.
    const idem = client.callTool(
      { name: 'slow', arguments: { ms: 1_500 }, _meta: idempotencyMeta('slow-1') },
      CallToolResultSchema,
      { timeout: 15_000 },
    );
    const plainOutcome = plain.then(
      (r) => ({ ok: true as const, r }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    await sleep(300);
    await first.served.close({ graceMs: 100 });
    const second = await startServer({ port, streamAfterMs: 50 });
    after(() => second.close());

    const idemResult = await withDeadline(idem, 12_000, 'idempotent call across the restart');
    assert.equal((idemResult.content as { text: string }[])[0]?.text, 'slept 1500');
    const outcome = await withDeadline(plainOutcome, 12_000, 'plain call across the restart');
    // The new process has no session and no events: the stream cannot be resumed, and a request
    // nobody marked idempotent must not be silently re-run. It fails with a reason that says so.
    assert.equal(outcome.ok, false, 'a non-idempotent call cannot complete across a restart');
    if (!outcome.ok)
      assert.match(String((outcome.e as Error).message), /not marked idempotent, so it was not re-sent/);
  });
});
