// The transport's OAuth client (src/client/auth/session.ts) against an in-memory authorization server: a `fetch`
// that answers from a table, so no socket is opened. What is checked here is the single-flight logic around
// `challenged` (which 401/403 starts a flow, which one just goes again) and that hostile metadata fails typed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { discoverServer } from '../../src/client/auth/metadata.js';
import { OAuthHttp } from '../../src/client/auth/oauth-http.js';
import { OAuthUrlPolicy } from '../../src/client/auth/url-policy.js';
import { AuthorizationError } from '../../src/client/index.js';

const RS = 'https://rs.example/mcp';
const AS = 'https://as.example';

const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('authorization server metadata', () => {
  test('an issuer that is not a string fails typed (metadata-issuer-mismatch), never with a TypeError', async () => {
    for (const issuer of [{ toString: 1 }, { valueOf: null, toString: null }, ['x'], 'x'.repeat(100_000)]) {
      const http = new OAuthHttp(
        async () => json({ issuer, authorization_endpoint: `${AS}/a`, token_endpoint: `${AS}/t` }),
        new OAuthUrlPolicy(new URL(RS), false),
        2_000,
      );
      await assert.rejects(discoverServer(http, AS), (error: unknown) => {
        assert.ok(error instanceof AuthorizationError, String(error));
        assert.equal(error.reason, 'metadata-issuer-mismatch');
        assert.ok(error.message.length < 1_000, 'the message quotes a bounded part of the document');
        return true;
      });
    }
  });
});
