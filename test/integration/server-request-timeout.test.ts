// Server-to-client requests that the SDK gives up on (its own request timeout) leave the session's
// `awaiting` set: a late reply to one is refused, and they do not pile up for the rest of the session.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Session } from '../../src/core/era-2025/session.js';
import { Sessions } from '../../src/core/era-2025/sessions.js';
import { type CreateServer, serve } from '../../src/server/index.js';
import { type Loose, RawSession, toolCall } from '../helpers/http.js';

function askServer(): McpServer {
  const server = new McpServer({ name: 'review-ask', version: '1.0.0' }, { capabilities: {} });
  server.registerTool('ask-timeout', { inputSchema: {} }, async (_args, extra) => {
    try {
      await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: 'Your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
          },
        },
        ElicitResultSchema,
        { timeout: 30 },
      );
      return { content: [{ type: 'text' as const, text: 'answered' }] };
    } catch {
      return { content: [{ type: 'text' as const, text: 'timed out' }] };
    }
  });
  return server;
}

describe('server-to-client requests abandoned by the SDK', () => {
  test('a request the SDK timed out no longer counts as awaiting a reply', {}, async () => {
    const sessions: Session[] = [];
    const register = Sessions.prototype.register;
    Sessions.prototype.register = function (this: Sessions, s: Session): void {
      sessions.push(s);
      register.call(this, s);
    };
    after(() => {
      Sessions.prototype.register = register;
    });
    const served = await serve({
      createServer: (() => askServer()) as unknown as CreateServer,
      port: 0,
      host: '127.0.0.1',
    });
    after(() => served.close());
    const s = new RawSession(served.url);
    await s.init(undefined, { elicitation: { form: {} } });
    const n = 20;
    const elicitIds: Loose[] = [];
    for (let i = 0; i < n; i++) {
      const r = await s.post(toolCall('ask-timeout', {}, `ask-${i}`));
      assert.equal(r.status, 200);
      const msgs = r.messages();
      const ask = msgs.find((m) => m.method === 'elicitation/create');
      assert.ok(ask !== undefined, 'the elicitation request went out on the POST stream');
      elicitIds.push(ask.id);
      const result = msgs.find((m) => m.id === `ask-${i}`);
      assert.equal(result?.result?.content?.[0]?.text, 'timed out');
    }
    assert.equal(sessions.length, 1);
    const session = sessions[0] as Session;
    const late = await s.post({ jsonrpc: '2.0', id: elicitIds[0], result: { action: 'decline' } });
    assert.deepEqual(
      { awaiting: session.awaiting.size, lateReplyStatus: late.status },
      { awaiting: 0, lateReplyStatus: 400 },
      'nothing awaits the timed-out requests any more',
    );
  });
});
