/**
 * Server-provided DPoP nonces at Sluice's resource server (RFC 9449 §9), with tokens oidc-provider
 * bound to a key: with `dpopNonce`, a proof without a current nonce is refused with `use_dpop_nonce`
 * and the nonce to use (its jti not spent), every accepted answer hands out the current nonce, a
 * nonce is good in its window and the next, and a nonce of another key or a made-up one is refused.
 * Then Sluice's client against it through OAuth: one `use_dpop_nonce` refusal at the start, and
 * none as the windows turn, because it takes the nonce each answer carries.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { parseChallenge } from '../../src/client/auth/challenge.js';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import {
  createMcpHandler,
  type McpHandler,
  type OAuthResourceServer,
  oauthResourceServer,
} from '../../src/server/index.js';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import {
  type AuthAnswer,
  ath,
  authPost,
  clientToken,
  type DpopKey,
  dpopKey,
  dpopProof,
} from '../helpers/dpop.js';
import { BrowserProvider } from '../helpers/headless-browser.js';
import { createProbe, testServerFactory } from '../helpers/test-server.js';

const WINDOW_S = 30;

describe('server-provided DPoP nonces (RFC 9449 §9)', () => {
  let as: TestAuthServer;
  let front: Server;
  let handler: McpHandler;
  let otherRs: OAuthResourceServer;
  /** Proofs for calls made straight to a resource server object. */
  const proofs: string[] = [];
  let url = '';
  /** How far the resource server's clock is ahead of the real one (ms). */
  let shift = 0;
  /** Status and DPoP error of every answer the endpoint gave, in order. */
  const answers: string[] = [];
  let key: DpopKey;
  let bound: string;

  before(async () => {
    as = await TestAuthServer.start({ keys: [await signingKey('nonce-as')], scopes: ['mcp:tools'] });
    front = createServer((req, res) => {
      // The handler writes its head in one writeHead call: read the status and challenge there.
      const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => typeof res;
      (res as { writeHead: unknown }).writeHead = (...a: unknown[]) => {
        const headers = a.find((x) => typeof x === 'object' && x !== null) as
          | Record<string, unknown>
          | undefined;
        const c = parseChallenge(String(headers?.['www-authenticate'] ?? ''), 'dpop');
        answers.push(`${String(a[0])}${c?.error === undefined ? '' : ` ${c.error}`}`);
        return writeHead(...a);
      };
      handler(req, res);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(front.address() as AddressInfo).port}/mcp`;
    const rs = (k: string) =>
      oauthResourceServer({
        resource: url,
        authorizationServers: [as.issuer],
        scopes: ['mcp:tools'],
        dpopNonce: { key: k, windowS: WINDOW_S },
        now: () => Date.now() + shift,
      });
    handler = createMcpHandler({ createServer: testServerFactory(createProbe()), oauth: rs('k'.repeat(32)) });
    otherRs = rs('o'.repeat(32));
    key = await dpopKey();
    bound = await clientToken(as, url, key);
    proofs.push(await dpopProof(key, { htm: 'POST', htu: url, ath: ath(bound) }));
  });
  after(async () => {
    await handler?.close();
    await new Promise<void>((resolve) => {
      front?.closeAllConnections();
      front?.close(() => resolve());
    });
    await as?.stop();
  });

  async function post(nonce?: string, proof?: string): Promise<AuthAnswer> {
    const claims = { htm: 'POST', htu: url, ath: ath(bound), ...(nonce === undefined ? {} : { nonce }) };
    return authPost(url, { authorization: `DPoP ${bound}`, dpop: proof ?? (await dpopProof(key, claims)) });
  }

  test('no nonce: 401 use_dpop_nonce with the nonce; with it: 200, and the answer carries the nonce', async () => {
    shift = 0;
    const proof = await dpopProof(key, { htm: 'POST', htu: url, ath: ath(bound) });
    const asked = await post(undefined, proof);
    assert.equal(asked.status, 401);
    assert.equal(asked.reason, 'dpop-nonce');
    assert.equal(parseChallenge(asked.challenge, 'dpop')?.error, 'use_dpop_nonce');
    assert.equal(
      parseChallenge(asked.challenge, 'bearer')?.error,
      undefined,
      'the Bearer challenge has no error',
    );
    assert.match(asked.nonce ?? '', /^[0-9a-z]+\.[A-Za-z0-9_-]{22}$/);
    const ok = await post(asked.nonce ?? '');
    assert.equal(ok.status, 200);
    assert.equal(ok.nonce, asked.nonce, 'the same window: the same nonce');
    // The refused proof was not spent: refused for its nonce again, not as a replay.
    assert.equal((await post(undefined, proof)).reason, 'dpop-nonce');
  });

  test('a nonce is good in its window and the next; the answer then hands out the new one', async () => {
    shift = 0;
    const first = (await post()).nonce ?? '';
    shift = WINDOW_S * 1000;
    const next = await post(first);
    assert.equal(next.status, 200, 'the window before is still good');
    assert.ok(next.nonce !== null && next.nonce !== first, 'a new nonce handed out');
    shift = 2 * WINDOW_S * 1000;
    const stale = await post(first);
    assert.equal(stale.status, 401);
    assert.equal(stale.reason, 'dpop-nonce');
    assert.equal((await post(stale.nonce ?? '')).status, 200);
  });

  test("a made-up nonce, or another key's, is refused", async () => {
    shift = 0;
    const good = (await post()).nonce ?? '';
    const [win, mac] = good.split('.') as [string, string];
    const flipped = `${win}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    for (const n of [flipped, `${win}.${'A'.repeat(22)}`, 'x', `${win}.${mac}.`, `${win}${mac}`]) {
      const r = await post(n);
      assert.equal(r.reason, 'dpop-nonce', n);
    }
    // Another deployment of this resource, with its own key: its nonce is not good here.
    const theirs = await otherRs.authenticate({
      method: 'POST',
      url: '/mcp',
      header: (n) => (n === 'authorization' ? `DPoP ${bound}` : n === 'dpop' ? proofs.shift() : undefined),
    });
    const nonce = 'status' in theirs ? theirs.headers?.['dpop-nonce'] : undefined;
    assert.ok(nonce !== undefined && nonce !== good, JSON.stringify(theirs));
    assert.equal((await post(nonce)).reason, 'dpop-nonce');
  });

  test("Sluice's client: one use_dpop_nonce at the start, none as the windows turn", async () => {
    shift = 0;
    answers.length = 0;
    const provider = new BrowserProvider();
    const transport = new StreamableHttpClientTransport(url, {
      authProvider: provider,
      waitForAuthorizationResponse: () => provider.response(),
    });
    const client = new Client({ name: 'nonce', version: '1.0.0' });
    try {
      await withDeadline(client.connect(transport), 20_000, 'connecting through OAuth');
      assert.equal(provider.tokens()?.token_type.toLowerCase(), 'dpop', 'oidc-provider bound the token');
      for (let w = 0; w < 4; w++) {
        // One window on per call: each call's nonce is the one the answer before handed out.
        shift = w * WINDOW_S * 1000;
        const r = await withDeadline(
          client.callTool({ name: 'echo', arguments: { text: `w${w}` } }),
          10_000,
          `the call in window ${w}`,
        );
        assert.deepEqual(r.content, [{ type: 'text', text: `w${w}` }]);
      }
    } finally {
      await client.close();
    }
    const asked = answers.filter((a) => a.endsWith('use_dpop_nonce'));
    assert.equal(asked.length, 1, answers.join(', '));
  });

  test('the refusals are counted by reason, in stats and in the metrics', () => {
    const by = handler.stats().authRefusals;
    // Every nonce refusal of this file's tests, and the client's first one, by their reason.
    assert.ok((by['dpop-nonce'] ?? 0) >= 10, JSON.stringify(by));
    assert.ok((by['unauthorized'] ?? 0) >= 1, JSON.stringify(by));
    const total = Object.values(by).reduce((a, b) => a + b, 0);
    assert.equal(total, handler.stats().refusals.auth);
    assert.match(
      handler.metrics(),
      new RegExp(`^sluice_auth_refusals_total\\{reason="dpop-nonce"\\} ${by['dpop-nonce']}$`, 'm'),
    );
  });
});
