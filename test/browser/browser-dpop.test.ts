/**
 * A page with a DPoP-bound token, in Chromium, against Sluice's resource server on another origin
 * (RFC 9449 §7, §9): the preflight lets the `DPoP` proof header through, the page reads the server's
 * `use_dpop_nonce` challenge and its `DPoP-Nonce`, and the request sent again with the nonce is served,
 * its answer's next nonce readable too. The token is oidc-provider's, bound to the test's key; the
 * proofs are signed in the test and handed to the page. Skipped loudly when Chromium is missing
 * (.ci/run installs it).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { oauthResourceServer, type Served, serve } from '../../src/server/index.js';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import { LOOPBACK_ONLY_CHROMIUM_ARGS } from '../helpers/chromium-args.js';
import { ath, clientToken, type DpopKey, dpopKey, dpopProof } from '../helpers/dpop.js';
import { initializeBody } from '../helpers/http.js';
import { createProbe, testServerFactory } from '../helpers/test-server.js';

const CHROMIUM = process.env['SLUICE_CHROMIUM'] ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const DEADLINE_MS = 60_000;

if (!available) {
  console.warn(
    `# browser-dpop.test: SKIPPED LOUDLY: no Chromium at ${CHROMIUM} (apt-get install chromium; .ci/run does)`,
  );
}

interface Seen {
  status: number;
  nonce: string | null;
  challenge: string | null;
  session: string | null;
}

describe('a DPoP-bound token from a page on another origin, in Chromium', {
  skip: available ? false : 'no Chromium',
}, () => {
  let as: TestAuthServer;
  let served: Served;
  let origin: Server;
  let browser: Browser;
  let page: Page;
  let key: DpopKey;
  let token = '';

  before(async () => {
    origin = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>dpop</title>');
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    const pageOrigin = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    as = await TestAuthServer.start({ keys: [await signingKey('browser-dpop')], scopes: ['mcp:tools'] });
    served = await serve({
      createServer: testServerFactory(createProbe()),
      port: 0,
      host: '127.0.0.1',
      allowedOrigins: [pageOrigin],
      oauth: (url) =>
        oauthResourceServer({ resource: url, authorizationServers: [as.issuer], dpopNonce: { windowS: 60 } }),
    });
    key = await dpopKey();
    token = await clientToken(as, served.url, key);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', ...LOOPBACK_ONLY_CHROMIUM_ARGS],
      timeout: DEADLINE_MS,
    });
    page = await browser.newPage();
    await page.goto(pageOrigin, { timeout: DEADLINE_MS });
  });
  after(async () => {
    await browser?.close();
    await served?.close();
    await as?.stop();
    await new Promise<void>((resolve) => (origin ? origin.close(() => resolve()) : resolve()));
  });

  /** The page POSTs an initialize with this token and proof, and reports what it could read. */
  function fromPage(proof: string): Promise<Seen> {
    return page.evaluate(
      async ({ url, authorization, dpop, body }) => {
        const r = await fetch(url, {
          method: 'POST',
          headers: {
            authorization,
            dpop,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
          body,
        });
        await r.text();
        return {
          status: r.status,
          nonce: r.headers.get('dpop-nonce'),
          challenge: r.headers.get('www-authenticate'),
          session: r.headers.get('mcp-session-id'),
        };
      },
      {
        url: served.url,
        authorization: `DPoP ${token}`,
        dpop: proof,
        body: JSON.stringify(initializeBody('2025-11-25', {}, 1)),
      },
    );
  }

  test('the preflight lets DPoP through; the page reads the nonce challenge, then is served', async () => {
    const claims = { htm: 'POST', htu: served.url, ath: ath(token) };
    const asked = await fromPage(await dpopProof(key, claims));
    assert.equal(asked.status, 401);
    assert.match(asked.challenge ?? '', /DPoP error="use_dpop_nonce"/);
    assert.ok(asked.nonce !== null && asked.nonce.length > 0, 'DPoP-Nonce is readable from the page');
    const served1 = await fromPage(await dpopProof(key, { ...claims, nonce: asked.nonce }));
    assert.equal(served1.status, 200);
    assert.ok(served1.session !== null, 'the session id is readable');
    assert.equal(served1.nonce, asked.nonce, 'the answer hands out the current nonce, readable too');
  });
});
