// The session id a server assigns must be visible ASCII (MCP 2025-11-25 basic/transports §"Session Management":
// "The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)"). One that is not — a
// space, two Mcp-Session-Id fields (read joined as "a, b"), bytes above 0x7E — fails the initialize with a typed
// error instead of being echoed on every request: node:http writes a POST's header block with its string body, as
// UTF-8, so bytes above 0x7E reached the server changed. Nor does any other header value with such a character (a
// caller's own header): it goes out as one byte per character on every method, as fetch sends a ByteString.
// Scripted node:http servers on 127.0.0.1:0, both adapters.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MalformedMessageError, StreamableHttpClientTransport } from '../../src/client/index.js';
import { CLIENT_ADAPTERS } from '../helpers/client-adapters.js';
import { withDeadline } from '../helpers/deadline.js';
import { initializeAnswer, scripted } from '../helpers/scripted-server.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
} as JSONRPCMessage;

/** Each case: the raw `Mcp-Session-Id` fields the server sends (latin1 strings: one character per byte). */
const CASES: Record<string, string[]> = {
  'a space': ['a b'],
  'two fields': ['a', 'b'],
  'bytes above 0x7E': [Buffer.from('sé', 'utf8').toString('latin1')],
};

for (const [adapter, http] of Object.entries(CLIENT_ADAPTERS)) {
  describe(`client: the server's Mcp-Session-Id (${adapter} adapter)`, () => {
    for (const [name, fields] of [['visible ASCII', ['s-1.A~']] as const, ...Object.entries(CASES)]) {
      const valid = name === 'visible ASCII';
      test(`${valid ? 'adopted' : 'refused'}: ${name}`, async () => {
        const server = await scripted((_req, res, seen) => {
          if (seen.body?.['method'] !== 'initialize') {
            res.writeHead(202).end();
            return;
          }
          const head: string[] = ['content-type', 'application/json'];
          for (const value of fields) head.push('mcp-session-id', value);
          res.writeHead(200, head);
          res.end(JSON.stringify(initializeAnswer(seen)));
        });
        const transport = new StreamableHttpClientTransport(server.url, {
          ...http,
          openStandaloneStream: false,
        });
        transport.onmessage = () => {};
        try {
          await transport.start();
          const sent = withDeadline(transport.send(INITIALIZE), 5_000, 'initialize');
          if (valid) {
            await sent;
            assert.equal(transport.sessionId, fields[0]);
            return;
          }
          await assert.rejects(sent, (e: unknown) => {
            assert.ok(e instanceof MalformedMessageError, String(e));
            assert.match(e.message, /Mcp-Session-Id/);
            return true;
          });
          assert.equal(transport.sessionId, undefined);
        } finally {
          await transport.close();
          await server.close();
        }
      });
    }

    test("a caller's header value with a character above 0x7F goes out as the same byte on a POST as on a GET", async () => {
      const server = await scripted((_req, res, seen) => {
        if (seen.method === 'GET') res.writeHead(405).end();
        else res.writeHead(202).end();
      });
      const transport = new StreamableHttpClientTransport(server.url, {
        ...http,
        headers: { 'x-tenant': 'café' },
        sessionId: 's1',
      });
      try {
        await transport.start();
        await withDeadline(
          transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JSONRPCMessage),
          5_000,
          'the notification',
        );
        await withDeadline(
          (async () => {
            while (!server.seen.some((s) => s.method === 'GET')) await new Promise((r) => setTimeout(r, 5));
          })(),
          5_000,
          'the GET',
        );
        // node:http reads header bytes as latin1: 'é' sent as the byte 0xE9 reads back as 'é'.
        for (const seen of server.seen) assert.equal(seen.headers['x-tenant'], 'café', seen.method);
      } finally {
        await transport.close();
        await server.close();
      }
    });
  });
}
