/**
 * The official SDK clients' own OAuth (their transports' authorization-code flow, not Sluice's) against Sluice's
 * resource server, with oidc-provider as the authorization server and the test as the user agent
 * (test/helpers/headless-browser.ts): SDK v1's `StreamableHTTPClientTransport` (2025-11-25 session) and SDK v2's
 * (2026-07-28). Each connects, is told to authorize, the browser logs in and consents, `finishAuth` redeems the
 * code, and the next connection calls a streaming tool.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Served } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { BrowserProvider, jwtClaims } from '../helpers/headless-browser.js';
import { type OAuthServed, startOAuthServed } from '../helpers/oauth-served.js';

const SCOPES = ['mcp:tools'];
const DEADLINE_MS = 20_000;

const textOf = (result: unknown): string =>
  ((result as { content?: { text?: string }[] }).content?.[0]?.text ?? '') as string;

describe("the official SDK clients' own OAuth against Sluice's server (oidc-provider)", () => {
  let fixture: OAuthServed | undefined;
  let served: Served;
  before(async () => {
    fixture = await startOAuthServed('sdk-clients', SCOPES);
    ({ served } = fixture);
  });
  after(async () => {
    await fixture?.stop();
  });

  test('SDK v1 (2025-11-25): authorize, finishAuth, reconnect, a streaming call', async () => {
    const provider = new BrowserProvider();
    const first = new V1Client({ name: 'sdk-v1-oauth', version: '1.0.0' });
    const transport = new V1Transport(new URL(served.url), { authProvider: provider });
    await assert.rejects(
      withDeadline(first.connect(transport), DEADLINE_MS, 'first connect'),
      /Unauthorized/,
    );
    const back = await withDeadline(provider.response(), DEADLINE_MS, 'the browser');
    await transport.finishAuth(back.searchParams.get('code') ?? '');
    await first.close();

    const client = new V1Client({ name: 'sdk-v1-oauth', version: '1.0.0' });
    await withDeadline(
      client.connect(new V1Transport(new URL(served.url), { authProvider: provider })),
      DEADLINE_MS,
      'connect with the token',
    );
    try {
      const seen: number[] = [];
      const r = await client.callTool({ name: 'progress', arguments: { n: 3, delayMs: 10 } }, undefined, {
        onprogress: (p) => seen.push(p.progress),
      });
      assert.equal(textOf(r), 'done 3');
      assert.deepEqual(seen, [1, 2, 3]);
    } finally {
      await client.close();
    }
    assert.equal(provider.authorizations, 1);
    assert.equal(jwtClaims(provider.tokens()?.access_token ?? '')['aud'], served.url);
  });

  test('SDK v2 (2026-07-28): authorize, finishAuth with the callback parameters, reconnect, a streaming call', async () => {
    const provider = new BrowserProvider();
    const options = { versionNegotiation: { mode: 'auto' as const } };
    const first = new V2Client({ name: 'sdk-v2-oauth', version: '1.0.0' }, options);
    const transport = new V2Transport(new URL(served.url), { authProvider: provider });
    await assert.rejects(withDeadline(first.connect(transport), DEADLINE_MS, 'first connect'));
    const back = await withDeadline(provider.response(), DEADLINE_MS, 'the browser');
    // RFC 9207: v2 checks the callback's `iss` against the issuer it discovered.
    await transport.finishAuth(back.searchParams);
    await first.close();

    const client = new V2Client({ name: 'sdk-v2-oauth', version: '1.0.0' }, options);
    await withDeadline(
      client.connect(new V2Transport(new URL(served.url), { authProvider: provider })),
      DEADLINE_MS,
      'connect with the token',
    );
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      const seen: number[] = [];
      const r = await client.callTool(
        { name: 'progress', arguments: { n: 3, delayMs: 10 } },
        { onprogress: (p) => seen.push(p.progress) },
      );
      assert.equal(textOf(r), 'done 3');
      assert.deepEqual(seen, [1, 2, 3]);
    } finally {
      await client.close();
    }
    assert.equal(provider.authorizations, 1);
    assert.equal(jwtClaims(provider.tokens()?.access_token ?? '')['aud'], served.url);
  });
});
