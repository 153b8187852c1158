// `sluice login --insecure-oauth-urls` is remembered with the credentials (src/cli/credentials.ts), so the
// commands that use them — and refresh them through the same authorization server — lift the OAuth client's URL
// policy for that server only; a later login without the flag puts the policy back.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { CredentialStore, FileOAuthProvider } from '../../src/cli/credentials.js';

const SERVER = 'http://mcp.internal.example/mcp';
const state = { authorizationServerUrl: 'http://10.0.0.6', resourceMetadata: { resource: SERVER } } as never;

describe('stored credentials: the URL policy choice', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cred-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a login with the flag stores it; later commands read it; a login without it clears it', () => {
    const store = new CredentialStore(dir);
    const login = new FileOAuthProvider(store, SERVER, { insecureOAuthUrls: true });
    assert.equal(login.insecureOAuthUrls, true);
    login.saveDiscoveryState(state);
    login.saveTokens({ access_token: 'a', token_type: 'Bearer' });
    assert.equal(store.find(SERVER)?.insecureOAuthUrls, true);

    const later = new FileOAuthProvider(new CredentialStore(dir), SERVER);
    assert.equal(later.insecureOAuthUrls, true, 'a command after the login');
    later.saveDiscoveryState(state);
    assert.equal(store.find(SERVER)?.insecureOAuthUrls, true, 'a refresh keeps the choice');

    const again = new FileOAuthProvider(new CredentialStore(dir), SERVER, { insecureOAuthUrls: false });
    again.saveDiscoveryState(state);
    assert.equal(store.find(SERVER)?.insecureOAuthUrls, undefined);
    assert.equal(new FileOAuthProvider(new CredentialStore(dir), SERVER).insecureOAuthUrls, false);
    assert.equal(store.find(SERVER)?.tokens?.access_token, 'a', 'the tokens stay');
  });

  test('without a login, the policy stands', () => {
    assert.equal(
      new FileOAuthProvider(new CredentialStore(dir), 'https://other.example/mcp').insecureOAuthUrls,
      false,
    );
  });
});
