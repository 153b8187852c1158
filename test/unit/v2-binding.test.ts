/**
 * Binding a served server to the 2026-07-28 revision (core/era-2026/v2-binding.ts): SDK v2 servers
 * bind and then serve that era; SDK v1 servers and anything that refuses are left exactly as they
 * were, so the request is served by Sluice's adapter as before.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpServer as V2McpServer } from '@modelcontextprotocol/server';
import { bindModern, envelopeOf, UNBOUND_METHODS } from '../../src/core/era-2026/v2-binding.js';

const META = {
  protocolVersion: '2026-07-28',
  clientCapabilities: { elicitation: {} },
  clientInfo: { name: 'c', version: '1' },
  logLevel: undefined,
};

test('an SDK v2 McpServer binds, names the revision it serves, and sees the client identity', () => {
  const m = new V2McpServer({ name: 'v2', version: '1' });
  assert.equal(bindModern(m, '2026-07-28', META), true);
  assert.equal(m.server.getClientCapabilities()?.elicitation !== undefined, true);
  assert.deepEqual(m.server.getClientVersion(), { name: 'c', version: '1' });
  const inner = m.server as unknown as { _servedModernEra(): boolean; _supportedProtocolVersions: string[] };
  assert.equal(inner._servedModernEra(), true);
  assert.ok(inner._supportedProtocolVersions.includes('2026-07-28'));
});

test('an SDK v2 server bound without identity (shared) keeps its client identity unset', () => {
  const m = new V2McpServer({ name: 'v2', version: '1' });
  assert.equal(bindModern(m, '2026-07-28'), true);
  assert.equal(m.server.getClientCapabilities(), undefined);
});

test('an SDK v1 server is not bound (it has no eras) and is left untouched', () => {
  const m = new V1McpServer({ name: 'v1', version: '1' });
  const before = JSON.stringify(Object.keys(m.server));
  assert.equal(bindModern(m, '2026-07-28', META), false);
  assert.equal(JSON.stringify(Object.keys(m.server)), before);
});

test('a server whose era probe refuses (an SDK that moved the field) is restored, not half-bound', () => {
  const fake = { _negotiatedProtocolVersion: '2025-11-25', _servedModernEra: () => false };
  assert.equal(bindModern(fake, '2026-07-28', META), false);
  assert.equal(fake._negotiatedProtocolVersion, '2025-11-25');
  const throwing = {
    _servedModernEra: () => {
      throw new Error('moved');
    },
  } as { _servedModernEra: () => never; _negotiatedProtocolVersion?: unknown };
  assert.equal(bindModern(throwing, '2026-07-28'), false);
  assert.equal(throwing._negotiatedProtocolVersion, undefined);
});

test('the envelope carries version, capabilities and client info; discover/listen stay unbound', () => {
  assert.deepEqual(envelopeOf(META), {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
    'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
  });
  assert.deepEqual(
    envelopeOf({ ...META, clientInfo: undefined })['io.modelcontextprotocol/clientInfo'],
    undefined,
  );
  assert.ok(UNBOUND_METHODS.has('server/discover') && UNBOUND_METHODS.has('subscriptions/listen'));
  assert.ok(!UNBOUND_METHODS.has('tools/call'));
});
