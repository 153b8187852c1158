// docs/scale-out.md as a user follows it: three `sluice serve --redis` processes with default
// settings (no lease, keepalive or client option changed) behind nginx running the document's
// nginx block as written. What the document promises is what these tests check: requests through
// the balancer are served, a replayed hop sent to the balancer never reaches an instance, and after
// `kill -9` of a session's owner the default Sluice client sees the in-flight call end with the
// owner-lost error and its next call re-initialize and succeed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { FORWARD_HEADER, signForward } from '../../src/cluster/forward-auth.js';
import { connectNodeRedis } from '../../src/cluster/node-redis.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { withDeadline } from '../helpers/deadline.js';
import { docClusterSkip, startDocNginx } from '../helpers/doc-nginx.js';
import { RawSession, send, sleep } from '../helpers/http.js';
import type { Nginx } from '../helpers/nginx.js';
import { type Redis, startRedis } from '../helpers/redis.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

const missing = docClusterSkip();

/** Defaults only: an inherited SLUICE_CLUSTER_LEASE_MS must not shorten the lease under test. */
const DEFAULT_ENV = { SLUICE_CLUSTER_LEASE_MS: '', SLUICE_CLUSTER_SECRET: '' };

function killed(p: SpawnedServe): Promise<void> {
  return new Promise((resolve) => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve();
    p.child.once('exit', () => resolve());
    p.child.kill('SIGKILL');
  });
}

async function connectClient(
  url: string,
  name: string,
): Promise<{ client: Client; transport: StreamableHttpClientTransport }> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHttpClientTransport(new URL(url));
  await withDeadline(client.connect(transport), 10_000, `${name}: connect through the balancer`);
  return { client, transport };
}

describe('docs/scale-out.md recipe: three instances behind the documented nginx block', {
  skip: missing,
}, () => {
  let redis: Redis;
  let link: RedisLink;
  const members: SpawnedServe[] = [];
  let ports: number[] = [];
  let nginx: Nginx;

  const start = (port = 0) => spawnServe(['--redis', redis.url, '--port', String(port)], DEFAULT_ENV, 45_000);

  before(async () => {
    redis = await startRedis();
    link = await connectNodeRedis({ url: redis.url });
    for (let i = 0; i < 3; i++) members.push(await start());
    ports = members.map((m) => Number(new URL(m.url).port));
    nginx = await startDocNginx(ports);
  });
  after(async () => {
    await nginx?.stop();
    for (const m of members) await m.close().catch(() => undefined);
    await link?.close();
    await redis?.stop();
  });

  test('`sluice serve --redis` says it joined: its instance id and the peers it saw', () => {
    assert.equal(members[0]?.cluster?.peers, 0, members[0]?.stderr());
    assert.equal(members[1]?.cluster?.peers, 1);
    assert.equal(members[2]?.cluster?.peers, 2);
    const ids = new Set(members.map((m) => m.cluster?.incarnation));
    assert.equal(ids.size, 3, 'three distinct instance ids');
  });

  test('the block as written serves MCP through the balancer; without its Host line every request is 403', async () => {
    const { client } = await connectClient(nginx.url, 'recipe');
    try {
      for (let i = 0; i < 6; i++) {
        const r = await withDeadline(
          client.callTool({ name: 'echo', arguments: { text: `e${i}` } }),
          10_000,
          'echo',
        );
        assert.deepEqual(r.content, [{ type: 'text', text: `e${i}` }]);
      }
    } finally {
      await client.close();
    }
    // The control: the same block without `proxy_set_header Host $http_host;` is refused by the
    // instances (they bind loopback), which is what the document's earlier block did to every user.
    const noHost = await startDocNginx(ports, (b) =>
      b.replace(/^\s*proxy_set_header Host \$http_host;\n/m, ''),
    );
    try {
      const r = await send(noHost.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      assert.equal(r.status, 403, r.text);
      assert.match(r.text, /host-not-allowed/);
    } finally {
      await noHost.stop();
    }
  });

  test('a used hop signature sent to the balancer never reaches an instance (the block strips x-sluice-forward)', async () => {
    const s = new RawSession(nginx.url);
    await s.init();
    const sid = s.sid ?? '';
    const [ownerInc, ownerUrl, secret] = await Promise.all([
      link.send(['HGET', `sl:{${sid}}`, 'o']),
      link.send(['HGET', `sl:{${sid}}`, 'a']),
      link.send(['GET', 'sl:secret']),
    ]);
    assert.equal(typeof secret, 'string');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'p1', method: 'ping' });
    // A hop as a relay signs it, used once where it was meant to go (the owner): that is the
    // capture an attacker on the peer network would hold.
    const header = signForward(String(secret), {
      method: 'POST',
      sessionId: sid,
      from: 'relay',
      to: String(ownerInc),
      lastEventId: undefined,
      body,
    });
    const used = await send(String(ownerUrl), {
      method: 'POST',
      headers: s.headers({ [FORWARD_HEADER]: header }),
      body,
    });
    assert.equal(used.status, 200, used.text);
    const throughBalancer = async (n: Nginx): Promise<number[]> => {
      const statuses: number[] = [];
      // Round-robin over three upstreams: three sends reach every instance.
      for (let i = 0; i < 3; i++) {
        const r = await send(n.url, {
          method: 'POST',
          headers: s.headers({ [FORWARD_HEADER]: header }),
          body,
        });
        statuses.push(r.status);
      }
      return statuses;
    };
    // The documented block drops the header: each send is an ordinary request of the session.
    assert.deepEqual(await throughBalancer(nginx), [200, 200, 200]);
    // The control: without the strip line the header reaches the instances, which refuse it (the
    // owner as a replay, 403; the others as meant for another instance, 421).
    const noStrip = await startDocNginx(ports, (b) =>
      b.replace(/^\s*proxy_set_header x-sluice-forward "";\n/m, ''),
    );
    try {
      const statuses = await throughBalancer(noStrip);
      assert.ok(
        statuses.every((st) => st === 403 || st === 421),
        `without the line the header arrives: ${statuses}`,
      );
    } finally {
      await noStrip.stop();
    }
  });

  /**
   * The other call the caller makes, besides the one in flight:
   * - 'after': once the in-flight call has ended;
   * - 'at-lapse': the moment the owner's lease lapses, so the client re-initializes (a new session)
   *   while the in-flight call is between two resume attempts: the resume must still name the session
   *   its stream belongs to (sent with the new id it was declined, 400 `resume-foreign`: the 400s of
   *   the chaos campaign in issue 21);
   * - 'at-once': right after the kill, while the lease holds: the 503 tells it to retry when the lease
   *   lapses (Retry-After), and its one retry then re-initializes and succeeds.
   */
  for (const other of ['after', 'at-lapse', 'at-once'] as const) {
    test(`kill -9 of the owner, default client, another call ${other}: the in-flight call ends with owner-lost, the other re-initializes and succeeds`, async () => {
      const { client, transport } = await connectClient(nginx.url, 'owner-kill');
      let owner = -1;
      try {
        const sid = transport.sessionId;
        assert.ok(sid !== undefined);
        const address = await link.send(['HGET', `sl:{${sid}}`, 'a']);
        owner = members.findIndex((m) => m.url === address);
        assert.ok(owner >= 0, `the owner ${String(address)} is one of the members`);
        const incarnation = members[owner]?.cluster?.incarnation;
        assert.ok(incarnation !== undefined);
        let progress = 0;
        let sawProgress: () => void = () => {};
        const progressed = new Promise<void>((resolve) => {
          sawProgress = resolve;
        });
        const call = client.callTool(
          { name: 'reindex', arguments: { corpus: 'c', docs: 1_000_000, delayMs: 5 } },
          undefined,
          {
            onprogress: () => {
              if (++progress === 5) sawProgress();
            },
            timeout: 120_000,
          },
        );
        const outcome = call.then(
          (r) => ({ ok: true as const, r }),
          (e: unknown) => ({ ok: false as const, e }),
        );
        await withDeadline(progressed, 10_000, 'progress of the long call');
        const killedAt = Date.now();
        await killed(members[owner] as SpawnedServe);
        if (other === 'at-once') {
          const first = await withDeadline(
            client.callTool({ name: 'echo', arguments: { text: 'first' } }),
            25_000,
            'a call right after the kill',
          );
          assert.deepEqual(first.content, [{ type: 'text', text: 'first' }]);
          assert.notEqual(transport.sessionId, sid, 're-initialized: a new session');
        }
        if (other === 'at-lapse') {
          const deadline = Date.now() + 15_000;
          while ((await link.send(['EXISTS', `sl:inst:${incarnation}`])) !== 0) {
            assert.ok(Date.now() < deadline, "the dead owner's lease lapses within 15 s");
            await sleep(20);
          }
          const first = await withDeadline(
            client.callTool({ name: 'echo', arguments: { text: 'first' } }),
            20_000,
            'a call right after the lease lapsed',
          );
          assert.deepEqual(first.content, [{ type: 'text', text: 'first' }]);
          assert.notEqual(transport.sessionId, sid, 're-initialized: a new session');
        }
        const ended = await withDeadline(outcome, 60_000, 'the in-flight call ends');
        const endedAfter = Date.now() - killedAt;
        assert.equal(ended.ok, false, 'the call cannot have succeeded: its owner is dead');
        const e = (ended as { e: unknown }).e;
        assert.ok(e instanceof McpError, `owner-lost as a JSON-RPC error, got ${String(e)}`);
        assert.equal(e.code, -32603, String(e));
        assert.equal((e.data as { reason?: unknown } | undefined)?.reason, 'owner-lost', String(e));
        // The next call, at once: the session is gone (404), the client re-initializes on a live
        // instance and the call succeeds, with no retry by the caller.
        const next = await withDeadline(
          client.callTool({ name: 'echo', arguments: { text: 'after' } }),
          20_000,
          'the call after the kill',
        );
        assert.deepEqual(next.content, [{ type: 'text', text: 'after' }]);
        assert.notEqual(transport.sessionId, sid, 're-initialized: a new session');
        process.stderr.write(`owner-lost reached the caller ${endedAfter} ms after kill -9\n`);
      } finally {
        await client.close().catch(() => undefined);
        // Back on its port, so the upstream list stays valid for what follows.
        if (owner >= 0) members[owner] = await start(ports[owner]);
      }
    });
  }
});
