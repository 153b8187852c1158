/**
 * Hosting an SDK v2 server (@modelcontextprotocol/server 2.4.0): `createServer` returns a v2
 * McpServer and Sluice serves it on both eras, legacy sessions through its bridge transport and
 * 2026-07-28 requests through its modern adapter: stamped results, server/discover and listen.
 * MRTR: a v2 tool that returns `inputRequired(...)` answers a 2026 client with the input_required
 * result (Sluice binds the per-request server to the revision, as v2's own entry does), takes the
 * client's `inputResponses`/`requestState` on the retry, is refused with 400/-32021 when the client
 * lacks the capability, and on a legacy session still runs through v2's own shim (real
 * server-to-client requests). The same holds with one shared server per principal (statelessSafe).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { inputRequired, McpServer as V2McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { type CreateServer, type Served, serve, statelessSafe } from '../../src/server/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { until } from '../helpers/http.js';
import { modernBody, modernOpen, modernSend } from '../helpers/modern.js';

/** Tool calls whose handler saw its signal abort, by tool argument `tag`. */
const abortedTags: string[] = [];

function buildV2(): V2McpServer {
  const m = new V2McpServer(
    { name: 'v2-hosted', version: '2.4.0' },
    { capabilities: { tools: { listChanged: true } } },
  );
  m.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  m.registerTool(
    'region',
    {
      inputSchema: z.object({ text: z.string(), region: z.string().meta({ 'x-mcp-header': 'Region' }) }),
    },
    async ({ text, region }) => ({ content: [{ type: 'text', text: `${text}@${region}` }] }),
  );
  m.registerTool('slow', { inputSchema: z.object({ tag: z.string() }) }, async ({ tag }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= 200; i++) {
      if (ctx.mcpReq.signal.aborted) {
        abortedTags.push(tag);
        return { content: [{ type: 'text', text: 'aborted' }] };
      }
      if (token !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i },
        });
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    return { content: [{ type: 'text', text: 'finished' }] };
  });
  // MRTR the v2 way: ask for a name, then greet with what came back; the state is echoed untouched.
  m.registerTool('greet', { inputSchema: z.object({}) }, async (_args, ctx) => {
    const answer = ctx.mcpReq.inputResponses?.['name'] as
      | { action?: string; content?: { name?: unknown } }
      | undefined;
    if (answer === undefined) {
      return inputRequired({
        inputRequests: {
          name: inputRequired.elicit({
            message: 'Your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          }),
        },
        requestState: 'round-1',
      });
    }
    const state = ctx.mcpReq.requestState?.() ?? 'none';
    return { content: [{ type: 'text', text: `hello ${String(answer.content?.name)} (${String(state)})` }] };
  });
  return m;
}

const MRTR_CAPS = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };

for (const shared of [false, true]) {
  describe(`hosting an SDK v2 server on both eras${shared ? ' (one shared server per principal)' : ''}`, () => {
    let s: Served;
    before(async () => {
      const create = (() => buildV2()) as unknown as CreateServer;
      s = await serve({
        createServer: shared ? statelessSafe(create) : create,
        port: 0,
        host: '127.0.0.1',
      });
    });
    after(async () => {
      await s.close();
    });

    test('modern: tools/call is stamped; server/discover and listen work', async () => {
      const r = await modernSend(
        s.url,
        modernBody('tools/call', { name: 'echo', arguments: { text: 'hi' } }, {}, 'e1'),
      );
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json().result.resultType, 'complete');
      assert.deepEqual(r.json().result._meta['io.modelcontextprotocol/serverInfo'], {
        name: 'v2-hosted',
        version: '2.4.0',
      });
      const d = await modernSend(s.url, modernBody('server/discover'));
      assert.deepEqual(d.json().result.capabilities.tools, { listChanged: true });
      const l = await modernOpen(
        s.url,
        modernBody('subscriptions/listen', { notifications: { toolsListChanged: true } }, {}, 'L'),
      );
      await l.waitFor((x) => x.messages().length >= 1, 3_000, 'ack');
      assert.equal(l.messages()[0].method, 'notifications/subscriptions/acknowledged');
      l.destroy();
    });

    test('legacy: an SDK 1.32 client gets a session and calls the v2 server', async () => {
      const c = new V1Client({ name: 'v1', version: '1.0.0' });
      const t = new V1Transport(new URL(s.url));
      await withDeadline(c.connect(t), 10_000, 'connect');
      try {
        assert.equal(typeof t.sessionId, 'string');
        const r = await withDeadline(
          c.callTool({ name: 'echo', arguments: { text: 'legacy' } }),
          5_000,
          'call',
        );
        assert.deepEqual(r.content, [{ type: 'text', text: 'legacy' }]);
      } finally {
        await c.close();
      }
    });

    test('the SDK v2 client in auto mode lands on the modern era against the v2-hosted server', async () => {
      const c = new V2Client({ name: 'v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await withDeadline(c.connect(new V2Transport(new URL(s.url))), 10_000, 'connect');
      try {
        assert.equal(c.getProtocolEra(), 'modern');
        const r = await withDeadline(c.callTool({ name: 'echo', arguments: { text: 'm' } }), 5_000, 'call');
        assert.deepEqual(r.content, [{ type: 'text', text: 'm' }]);
      } finally {
        await c.close();
      }
    });

    test('the SDK v2 client in its default mode lands on the legacy era (a session) against the v2-hosted server', async () => {
      const c = new V2Client({ name: 'v2', version: '1.0.0' });
      const t = new V2Transport(new URL(s.url));
      await withDeadline(c.connect(t), 10_000, 'connect');
      try {
        assert.equal(c.getProtocolEra(), 'legacy');
        assert.equal(typeof t.sessionId, 'string');
        const r = await withDeadline(c.callTool({ name: 'echo', arguments: { text: 'd' } }), 5_000, 'call');
        assert.deepEqual(r.content, [{ type: 'text', text: 'd' }]);
      } finally {
        await c.close();
      }
    });

    test('modern MRTR: input_required, then the retry with inputResponses and requestState completes', async () => {
      const first = await modernSend(
        s.url,
        modernBody('tools/call', { name: 'greet', arguments: {} }, MRTR_CAPS, 'g1'),
      );
      assert.equal(first.status, 200, first.text);
      const r1 = first.json();
      assert.equal(r1.id, 'g1');
      assert.equal(r1.result.resultType, 'input_required', first.text);
      assert.equal(r1.result.inputRequests.name.method, 'elicitation/create');
      assert.equal(r1.result.requestState, 'round-1');
      assert.equal(first.headers['mcp-session-id'], undefined);
      const second = await modernSend(
        s.url,
        modernBody(
          'tools/call',
          {
            name: 'greet',
            arguments: {},
            inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
            requestState: r1.result.requestState,
          },
          MRTR_CAPS,
          'g2',
        ),
      );
      assert.equal(second.status, 200, second.text);
      const r2 = second.json();
      assert.equal(r2.id, 'g2');
      assert.equal(r2.result.resultType, 'complete');
      assert.deepEqual(r2.result.content, [{ type: 'text', text: 'hello Ada (round-1)' }]);
    });

    test('modern MRTR: a client without the elicitation capability gets 400/-32021', async () => {
      const r = await modernSend(s.url, modernBody('tools/call', { name: 'greet', arguments: {} }, {}, 'g3'));
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json().id, 'g3');
      assert.equal(r.json().error.code, -32021);
      // v2 names the mode it needs ({elicitation: {form: {}}}); the key is what the client must declare.
      assert.deepEqual(Object.keys(r.json().error.data.requiredCapabilities), ['elicitation']);
    });

    test('modern: discover and tools/list still work next to bound requests', async () => {
      const d = await modernSend(s.url, modernBody('server/discover', {}, MRTR_CAPS));
      assert.equal(d.status, 200, d.text);
      assert.deepEqual(d.json().result.supportedVersions, ['2026-07-28']);
      const l = await modernSend(s.url, modernBody('tools/list', {}, MRTR_CAPS));
      assert.equal(l.status, 200, l.text);
      assert.deepEqual(
        l
          .json()
          .result.tools.map((t: { name: string }) => t.name)
          .sort(),
        ['echo', 'greet', 'region', 'slow'],
      );
      assert.equal(l.json().result.resultType, 'complete');
    });

    test('modern on a bound v2 server: Mcp-Param headers checked, progress streams, a close aborts the handler', async () => {
      const args = { name: 'region', arguments: { text: 't', region: 'eu' } };
      const missing = await modernSend(s.url, modernBody('tools/call', args, {}, 'p1'));
      assert.equal(missing.status, 400, missing.text);
      assert.equal(missing.json().error.code, -32020);
      const ok = await modernSend(s.url, modernBody('tools/call', args, {}, 'p2'), {
        'Mcp-Param-Region': 'eu',
      });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.json().result.content, [{ type: 'text', text: 't@eu' }]);

      const tag = `cut-${shared}`;
      const stream = await modernOpen(
        s.url,
        modernBody('tools/call', { name: 'slow', arguments: { tag } }, { progressToken: 'pt' }, 'p3'),
      );
      await stream.waitFor((r) => r.messages().length >= 2, 5_000, 'progress');
      assert.equal(stream.messages()[0].method, 'notifications/progress');
      stream.destroy();
      await until(() => abortedTags.includes(tag), 5_000, 'handler aborted');
    });

    test('the SDK v2 client (auto) answers the v2 tool elicitation through MRTR rounds', async () => {
      const c = new V2Client(
        { name: 'v2', version: '1.0.0' },
        { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } },
      );
      let asked = 0;
      c.setRequestHandler('elicitation/create', async () => {
        asked++;
        return { action: 'accept', content: { name: 'Grace' } };
      });
      await withDeadline(c.connect(new V2Transport(new URL(s.url))), 10_000, 'connect');
      try {
        assert.equal(c.getProtocolEra(), 'modern');
        const r = await withDeadline(c.callTool({ name: 'greet', arguments: {} }), 5_000, 'call');
        assert.deepEqual(r.content, [{ type: 'text', text: 'hello Grace (round-1)' }]);
        assert.equal(asked, 1);
      } finally {
        await c.close();
      }
    });

    test('legacy: an SDK 1.32 client with elicitation gets a real elicitation request (the v2 shim)', async () => {
      const c = new V1Client({ name: 'v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      let asked = 0;
      c.setRequestHandler(ElicitRequestSchema, async () => {
        asked++;
        return { action: 'accept', content: { name: 'Linus' } };
      });
      await withDeadline(c.connect(new V1Transport(new URL(s.url))), 10_000, 'connect');
      try {
        const r = await withDeadline(c.callTool({ name: 'greet', arguments: {} }), 5_000, 'call');
        assert.equal(asked, 1);
        assert.match(JSON.stringify(r.content), /hello Linus/);
      } finally {
        await c.close();
      }
    });
  });
}
