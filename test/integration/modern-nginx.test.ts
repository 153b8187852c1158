/**
 * Behind a real nginx whose proxy_read_timeout (1 s) is shorter than a silent tool: nginx cuts the
 * upstream connection. For a 2026-07-28 request that cut is a cancel (the handler stops, nothing is
 * kept); for a legacy session it is only a disconnect, and the client resumes with Last-Event-ID.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { McpServer as V2McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { CreateServer } from '../../src/server/index.js';
import { RawSession, toolCall, until } from '../helpers/http.js';
import { modernBody, modernOpen } from '../helpers/modern.js';
import { RECOMMENDED_LOCATION, skipWithoutNginx, startProxied, stopProxied } from '../helpers/nginx.js';

after(stopProxied);

const CUTTING = RECOMMENDED_LOCATION.replace(/proxy_read_timeout\s+\S+;/, 'proxy_read_timeout 1s;');

describe('modern era behind nginx', () => {
  test('a proxy cut cancels a modern request; a legacy request on the same proxy still resumes', async (t) => {
    if (skipWithoutNginx(t)) return;
    // keepaliveMs 0: nothing flows while the tool sleeps, so nginx's read timeout fires.
    const { upstream, nginx } = await startProxied({ keepaliveMs: 0 }, { location: CUTTING });

    const m = await modernOpen(
      nginx.url,
      modernBody('tools/call', { name: 'sleep', arguments: { ms: 4000 } }, { progressToken: 'p' }, 'cut'),
      { accept: 'text/event-stream' },
    );
    await until(
      () => upstream.handler.stats().modern.cancels === 1,
      3_500,
      'upstream saw the cut as a cancel',
    );
    assert.equal(upstream.handler.stats().modern.inflight, 0);
    m.destroy();

    const s = new RawSession(nginx.url);
    await s.init();
    const p = await s.postOpen(toolCall('sleep', { ms: 1400 }, 'legacy'), { accept: 'text/event-stream' });
    await p.finished(5_000, 'the proxy cuts the legacy stream too');
    const lastId = p.events.at(-1)?.id;
    assert.ok(lastId, 'the legacy stream carried a priming event id before the cut');
    assert.equal(upstream.handler.stats().orphanAborts, 0, 'not cancelled');
    const g = await s.get({ 'last-event-id': lastId });
    await g.waitFor((x) => x.messages().some((msg) => msg.id === 'legacy'), 5_000, 'resumed result');
    g.destroy();
  });

  test('the same cut cancels a modern request on a v2-hosted server (its handler signal aborts)', async (t) => {
    if (skipWithoutNginx(t)) return;
    const aborted: string[] = [];
    const createServer = (() => {
      const m = new V2McpServer({ name: 'v2-behind-nginx', version: '1.0.0' });
      m.registerTool(
        'sleep',
        { inputSchema: z.object({ ms: z.number().int().max(10_000) }) },
        async ({ ms }, ctx) => {
          try {
            await delay(ms, undefined, { signal: ctx.mcpReq.signal });
          } catch {
            aborted.push('sleep');
          }
          return { content: [{ type: 'text', text: 'slept' }] };
        },
      );
      return m;
    }) as unknown as CreateServer;
    const { upstream, nginx } = await startProxied({ keepaliveMs: 0, createServer } as never, {
      location: CUTTING,
    });
    const m = await modernOpen(
      nginx.url,
      modernBody('tools/call', { name: 'sleep', arguments: { ms: 4000 } }, { progressToken: 'p' }, 'cut2'),
      { accept: 'text/event-stream' },
    );
    await until(() => aborted.length === 1, 3_500, 'the v2 handler saw the cut as a cancel');
    assert.equal(upstream.handler.stats().modern.cancels, 1);
    assert.equal(upstream.handler.stats().modern.inflight, 0);
    m.destroy();
  });
});
