/**
 * Sluice's client against the official SDK v2 server guarded by its own bearer-auth gate
 * (`requireBearerAuth` from `@modelcontextprotocol/server` 2.x, the fetch counterpart of the Express
 * middleware) and serving its own protected resource metadata (`oauthMetadataResponse`), with oidc-provider
 * as the authorization server: discovery from the SDK's 401 challenge, dynamic registration, the
 * authorization-code flow, then calls in both eras.
 *
 * oidc-provider offers DPoP, which the SDK's gate does not accept (it knows only `Bearer`): the client must
 * ask for a plain bearer token, because neither the SDK's challenge nor its metadata says it takes DPoP.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type AuthInfo,
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  McpServer,
  OAuthError,
  OAuthErrorCode,
  oauthMetadataResponse,
  requireBearerAuth,
} from '@modelcontextprotocol/server';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { z } from 'zod';
import { StreamableHttpClientTransport } from '../../src/client/index.js';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import { withDeadline } from '../helpers/deadline.js';
import { BrowserProvider, jwtClaims } from '../helpers/headless-browser.js';

const SCOPES = ['mcp:tools'];

function buildServer(): McpServer {
  const server = new McpServer({ name: 'sdk-v2-bearer', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: 'The token’s subject and scopes', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const info = (ctx as { http?: { authInfo?: AuthInfo } }).http?.authInfo;
      return {
        content: [{ type: 'text', text: `${info?.clientId ?? '?'} ${info?.scopes.join(' ') ?? ''}` }],
      };
    },
  );
  return server;
}

interface Running {
  url: string;
  /** Every request's `METHOD path status`, in order. */
  log: string[];
  close(): Promise<void>;
}

/** The SDK v2 server behind its bearer gate on node:http (a small fetch bridge), tokens checked with jose. */
async function startSdkServer(as: TestAuthServer): Promise<Running> {
  const oidc = (await (await fetch(`${as.issuer}/.well-known/openid-configuration`)).json()) as {
    jwks_uri: string;
  } & Record<string, unknown>;
  const jwks = createRemoteJWKSet(new URL(oidc.jwks_uri));
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      try {
        const { payload } = await jwtVerify(token, jwks, { issuer: as.issuer, audience: url });
        return {
          token,
          clientId: String(payload['client_id']),
          scopes: String(payload['scope'] ?? '').split(' '),
          ...(payload.exp === undefined ? {} : { expiresAt: payload.exp }),
          resource: new URL(url),
        };
      } catch (error) {
        throw new OAuthError(OAuthErrorCode.InvalidToken, `token refused: ${(error as Error).message}`);
      }
    },
  };
  const gate = requireBearerAuth({
    verifier,
    requiredScopes: SCOPES,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(url)),
    expectedResource: new URL(url),
  });
  const metadata = {
    oauthMetadata: oidc as never,
    resourceServerUrl: new URL(url),
    scopesSupported: SCOPES,
    dangerouslyAllowInsecureIssuerUrl: true,
  };
  const handler = createMcpHandler(() => buildServer());
  const log: string[] = [];
  http.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) {
          if (typeof v === 'string') headers.set(k, v);
        }
        const abort = new AbortController();
        res.on('close', () => abort.abort());
        const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
          method: req.method ?? 'GET',
          headers,
          signal: abort.signal,
          ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
        });
        let response = oauthMetadataResponse(request, metadata);
        if (response === undefined) {
          const auth = await gate(request);
          response = auth instanceof Response ? auth : await handler.fetch(request, { authInfo: auth });
        }
        log.push(`${req.method ?? ''} ${req.url ?? ''} ${response.status}`);
        res.writeHead(response.status, Object.fromEntries(response.headers));
        if (response.body === null) {
          res.end();
          return;
        }
        for await (const chunk of response.body) res.write(chunk);
        res.end();
      })().catch(() => res.destroy());
    });
  });
  return {
    url,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

const textOf = (result: unknown): string =>
  ((result as { content?: { text?: string }[] }).content?.[0]?.text ?? '') as string;

describe('Sluice client vs the SDK v2 server with requireBearerAuth (oidc-provider)', () => {
  let as: TestAuthServer;
  let server: Running;
  before(async () => {
    as = await TestAuthServer.start({ keys: [await signingKey('sdk-v2-1')], scopes: SCOPES });
    server = await startSdkServer(as);
  });
  after(async () => {
    await server?.close();
    await as?.stop();
  });

  for (const era of ['2025-11-25', '2026-07-28'] as const) {
    test(`${era}: discovery from the SDK's challenge, the flow, a bearer token, a call`, async () => {
      const provider = new BrowserProvider();
      const transport = new StreamableHttpClientTransport(server.url, {
        authProvider: provider,
        waitForAuthorizationResponse: () => provider.response(),
      });
      const from = server.log.length;
      const client =
        era === '2025-11-25'
          ? new V1Client({ name: 'sluice-vs-sdk-v2', version: '1.0.0' })
          : new V2Client(
              { name: 'sluice-vs-sdk-v2', version: '1.0.0' },
              { versionNegotiation: { mode: 'auto' } },
            );
      try {
        await withDeadline(client.connect(transport), 20_000, 'connect through the SDK gate');
        if (client instanceof V2Client) assert.equal(client.getProtocolEra(), 'modern');
        const call = (): Promise<unknown> =>
          client instanceof V2Client
            ? client.callTool({ name: 'whoami', arguments: {} })
            : client.callTool({ name: 'whoami', arguments: {} });
        const result = await withDeadline(call(), 10_000, 'whoami');
        const info = provider.clientInformation();
        assert.equal(textOf(result), `${info?.client_id} ${SCOPES.join(' ')}`);
      } finally {
        await client.close();
      }
      assert.equal(provider.authorizations, 1);
      const tokens = provider.tokens();
      assert.equal(tokens?.token_type.toLowerCase(), 'bearer', 'the SDK gate takes Bearer only');
      assert.equal(jwtClaims(tokens?.access_token ?? '')['aud'], server.url);
      const seen = server.log.slice(from);
      assert.equal(seen[0], 'POST /mcp 401');
      assert.ok(seen.includes('GET /.well-known/oauth-protected-resource/mcp 200'), seen.join(', '));
      assert.equal(
        seen.filter((l) => l.endsWith(' 401')).length,
        1,
        `one refusal, before the flow: ${seen.join(', ')}`,
      );
    });
  }
});
