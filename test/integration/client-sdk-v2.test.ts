/**
 * SDK v2's `Client` (`@modelcontextprotocol/client` 2.x) over Sluice's `StreamableHttpClientTransport`, in both
 * protocol eras: against SDK v2's own server (2026-07-28 and legacy), SDK v1's server (legacy only) and Sluice
 * (legacy today; the 2026-07-28 era once Sluice's server answers it — detected, and skipped loudly otherwise).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import {
  RequestLostError,
  ResumeImpossibleError,
  StreamableHttpClientTransport,
} from '../../src/client/index.js';
import { withDeadline } from '../helpers/deadline.js';
import { type SdkServer, startSdkServer } from '../helpers/sdk-reference-server.js';
import { startV2Server, type V2Server } from '../helpers/sdk-v2-server.js';
import { type Running, startServer } from '../helpers/test-server.js';

const DEADLINE_MS = 15_000;
const MODERN = '2026-07-28';

interface Connected {
  readonly client: Client;
  readonly transport: StreamableHttpClientTransport;
  readonly errors: Error[];
}

async function connect(url: string, mode: 'auto' | 'legacy'): Promise<Connected> {
  const client = new Client(
    { name: 'sluice-v2-interop', version: '0.0.0' },
    mode === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {},
  );
  const transport = new StreamableHttpClientTransport(url);
  const errors: Error[] = [];
  await withDeadline(client.connect(transport), DEADLINE_MS, `SDK v2 Client connecting (${mode})`);
  // Client.connect installs its own onerror; chain ours behind it to see the transport's typed errors.
  const sdkOnError = transport.onerror;
  transport.onerror = (error) => {
    errors.push(error);
    sdkOnError?.(error);
  };
  return { client, transport, errors };
}

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content;
  const first = content?.[0];
  assert.ok(first?.type === 'text' && typeof first.text === 'string', `no text in ${JSON.stringify(result)}`);
  return first.text;
}

function posts(server: V2Server, rpcMethod: string): V2Server['log'] {
  return server.log.filter((r) => r.method === 'POST' && r.headers['mcp-method'] === rpcMethod);
}

describe('SDK v2 Client over Sluice transport, SDK v2 server, 2026-07-28 era', () => {
  let server: V2Server;
  let c: Connected;
  before(async () => {
    server = await startV2Server();
    c = await connect(server.url, 'auto');
  });
  after(async () => {
    await c?.client.close();
    await server?.close();
  });

  test('negotiates the modern era; requests carry the standard headers and never a session id', async () => {
    assert.equal(c.client.getProtocolEra(), 'modern');
    const list = await withDeadline(c.client.listTools(), DEADLINE_MS, 'tools/list');
    assert.ok(list.tools.some((t) => t.name === 'echo'));
    const result = await withDeadline(
      c.client.callTool({ name: 'echo', arguments: { text: 'hi', region: 'eu-west-1' } }),
      DEADLINE_MS,
      'tools/call echo',
    );
    assert.equal(textOf(result), 'hi|eu-west-1');
    const [call] = posts(server, 'tools/call');
    assert.ok(call, 'the tools/call POST carried Mcp-Method');
    assert.equal(call.headers['mcp-protocol-version'], MODERN);
    assert.equal(call.headers['mcp-name'], 'echo');
    assert.equal(call.headers['mcp-param-region'], 'eu-west-1');
    for (const r of server.log) assert.equal(r.headers['mcp-session-id'], undefined, 'no session id, ever');
    for (const r of server.log) assert.notEqual(r.method, 'GET', 'no standalone GET stream in this era');
    assert.equal(c.transport.sessionId, undefined);
  });

  test('a value that is not a safe header value travels as the Base64 sentinel and is accepted', async () => {
    const region = ' Zürich ';
    const result = await withDeadline(
      c.client.callTool({ name: 'echo', arguments: { text: 'x', region } }),
      DEADLINE_MS,
      'tools/call echo (non-ASCII)',
    );
    assert.equal(textOf(result), `x|${region}`);
    const sent = posts(server, 'tools/call').at(-1);
    const expected = `=?base64?${Buffer.from(region, 'utf8').toString('base64')}?=`;
    assert.equal(sent?.headers['mcp-param-region'], expected);
  });

  test('progress arrives; aborting cancels by closing the request, with no notifications/cancelled', async () => {
    const seen: number[] = [];
    const controller = new AbortController();
    const call = c.client.callTool(
      { name: 'slow', arguments: { steps: 200, delayMs: 25 } },
      {
        signal: controller.signal,
        onprogress: (p) => {
          seen.push(p.progress);
          if (seen.length === 3) controller.abort('user cancelled');
        },
      },
    );
    await assert.rejects(withDeadline(call, DEADLINE_MS, 'cancelled call'));
    assert.deepEqual(seen, [1, 2, 3]);
    // The server's handler sees its signal abort: the closed stream was the cancellation.
    const until = Date.now() + DEADLINE_MS;
    while (!server.aborted.includes('slow') && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(server.aborted.includes('slow'), 'the handler was aborted');
    assert.equal(posts(server, 'notifications/cancelled').length, 0);
    assert.equal(c.transport.inspect().pendingRequestIds.length, 0);
    assert.equal(c.transport.inspect().httpRequestsInFlight, 0);
  });

  test('a stream broken mid-way fails the request at once with RequestLostError (no resume, no resend)', async () => {
    const before = server.log.length;
    const call = c.client.callTool(
      { name: 'drop', arguments: { steps: 100, delayMs: 20 } },
      { onprogress: () => undefined, timeout: 60_000 },
    );
    const error = await withDeadline(
      call.then(
        () => assert.fail('the call should fail'),
        (e: unknown) => e,
      ),
      DEADLINE_MS,
      'broken call',
    );
    // The deadline (15 s) is far below the request's 60 s timeout: it failed at once, not by timing out.
    assert.match(String((error as Error).message), /lost/);
    assert.equal(
      (error as { data?: { sluiceCode?: string } }).data?.sluiceCode,
      'SLUICE_CLIENT_REQUEST_LOST',
    );
    assert.ok(c.errors.some((e) => e instanceof RequestLostError));
    const after = server.log.slice(before);
    assert.equal(after.length, 1, 'one POST; no GET resume, no re-send');
    assert.equal(after[0]?.headers['last-event-id'], undefined);
  });
});

describe('Sluice transport alone, modern requests built by hand, SDK v2 server', () => {
  let server: V2Server;
  before(async () => {
    server = await startV2Server();
  });
  after(async () => {
    await server?.close();
  });

  test('Mcp-Param headers are added from the x-mcp-header declarations the transport saw in tools/list', async () => {
    const transport = new StreamableHttpClientTransport(server.url);
    const answers = new Map<unknown, unknown>();
    transport.onmessage = (m) => {
      if ('id' in m) answers.set(m.id, m);
    };
    await transport.start();
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
    };
    const answered = async (id: number) => {
      const until = Date.now() + DEADLINE_MS;
      while (!answers.has(id) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      return answers.get(id) as { result?: unknown; error?: { code: number } } | undefined;
    };
    const call = { name: 'echo', arguments: { text: 't', region: 'ap-south' }, _meta: envelope };
    // Before tools/list the transport knows no declaration: the server rejects the call (-32020).
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call });
    assert.equal((await answered(1))?.error?.code, -32020);
    await transport.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } });
    assert.ok((await answered(2))?.result);
    await transport.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: call });
    assert.equal(textOf((await answered(3))?.result), 't|ap-south');
    assert.equal(server.log.at(-1)?.headers['mcp-param-region'], 'ap-south');
    await transport.close();
  });
});

describe('SDK v2 Client over Sluice transport, SDK v2 server, legacy era', () => {
  let server: V2Server;
  let c: Connected;
  before(async () => {
    server = await startV2Server();
    c = await connect(server.url, 'legacy');
  });
  after(async () => {
    await c?.client.close();
    await server?.close();
  });

  test('the default mode initializes; no 2026 header is sent', async () => {
    assert.equal(c.client.getProtocolEra(), 'legacy');
    const result = await withDeadline(
      c.client.callTool({ name: 'echo', arguments: { text: 'old' } }),
      DEADLINE_MS,
      'tools/call legacy',
    );
    assert.equal(textOf(result), 'old|');
    assert.ok(server.log.some((r) => r.body.includes('"initialize"')));
    for (const r of server.log) assert.equal(r.headers['mcp-method'], undefined);
  });

  test('a stream cut before any event id fails at once with ResumeImpossibleError, not at the timeout', async () => {
    const call = c.client.callTool(
      { name: 'drop', arguments: { steps: 100, delayMs: 20 } },
      { onprogress: () => undefined, timeout: 60_000 },
    );
    // The deadline (15 s) is far below the request's 60 s timeout.
    const error = await withDeadline(
      call.then(
        () => assert.fail('the call should fail'),
        (e: unknown) => e,
      ),
      DEADLINE_MS,
      'legacy broken call',
    );
    assert.equal(
      (error as { data?: { sluiceCode?: string } }).data?.sluiceCode,
      'SLUICE_CLIENT_RESUME_IMPOSSIBLE',
    );
    assert.ok(c.errors.some((e) => e instanceof ResumeImpossibleError));
  });
});

describe('SDK v2 Client over Sluice transport, SDK v1 server (legacy only)', () => {
  let server: SdkServer;
  let c: Connected;
  before(async () => {
    server = await startSdkServer();
    c = await connect(server.url, 'auto');
  });
  after(async () => {
    await c?.client.close();
    await server?.close();
  });

  test('auto mode falls back to the legacy handshake and works with a session', async () => {
    assert.equal(c.client.getProtocolEra(), 'legacy');
    assert.ok(c.transport.sessionId, 'the legacy session id was adopted');
    const result = await withDeadline(
      c.client.callTool({ name: 'echo', arguments: { text: 'v1' } }),
      DEADLINE_MS,
      'tools/call on v1',
    );
    assert.match(textOf(result), /v1/);
  });
});

describe('SDK v2 Client over Sluice transport, Sluice server', () => {
  let server: Running;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.close();
  });

  test('legacy era (default mode): initialize, a session, tools work', async () => {
    const c = await connect(server.url, 'legacy');
    try {
      assert.equal(c.client.getProtocolEra(), 'legacy');
      assert.ok(c.transport.sessionId);
      const result = await withDeadline(
        c.client.callTool({ name: 'echo', arguments: { text: 'legacy' } }),
        DEADLINE_MS,
        'legacy tools/call on Sluice',
      );
      assert.match(textOf(result), /legacy/);
    } finally {
      await c.client.close();
    }
  });

  test('auto mode: tools work in whichever era Sluice serves (legacy fallback when it serves only 2025)', async () => {
    const c = await connect(server.url, 'auto');
    try {
      const result = await withDeadline(
        c.client.callTool({ name: 'echo', arguments: { text: 'sluice' } }),
        DEADLINE_MS,
        'tools/call on Sluice',
      );
      assert.match(textOf(result), /sluice/);
      if (c.client.getProtocolEra() === 'legacy') assert.ok(c.transport.sessionId);
    } finally {
      await c.client.close();
    }
  });

  test('2026-07-28 era against Sluice (runs once the server answers modern requests)', async (t) => {
    if (!(await servesModern(server.url))) {
      t.skip(
        'SKIPPED LOUDLY: this Sluice server answers only the legacy era (no 2026-07-28 server/discover yet)',
      );
      console.warn(
        '# client-sdk-v2: Sluice modern-era interop skipped: the server does not serve 2026-07-28',
      );
      return;
    }
    const c = await connect(server.url, 'auto');
    try {
      assert.equal(c.client.getProtocolEra(), 'modern');
      const result = await withDeadline(
        c.client.callTool({ name: 'echo', arguments: { text: 'modern' } }),
        DEADLINE_MS,
        'modern tools/call on Sluice',
      );
      assert.match(textOf(result), /modern/);
      assert.equal(c.transport.sessionId, undefined);

      // Progress on the request's own stream.
      const seen: number[] = [];
      await withDeadline(
        c.client.callTool(
          { name: 'progress', arguments: { n: 5, delayMs: 5 } },
          { onprogress: (p) => void seen.push(p.progress) },
        ),
        DEADLINE_MS,
        'modern progress on Sluice',
      );
      assert.deepEqual(seen, [1, 2, 3, 4, 5]);

      // Cancelling closes the request; Sluice treats the disconnect as the cancel and aborts the handler.
      const controller = new AbortController();
      const started = server.probe.onStart('slow');
      const slow = c.client.callTool(
        { name: 'slow', arguments: { ms: 30_000 } },
        { signal: controller.signal },
      );
      await withDeadline(started, DEADLINE_MS, 'slow started');
      controller.abort('user cancelled');
      await assert.rejects(withDeadline(slow, DEADLINE_MS, 'cancelled slow'));
      const until = Date.now() + DEADLINE_MS;
      while (!server.probe.aborted.includes('slow:30000') && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.ok(server.probe.aborted.includes('slow:30000'), 'the handler was aborted by the closed request');
      assert.equal(c.transport.inspect().pendingRequestIds.length, 0);
    } finally {
      await c.client.close();
    }
  });
});

/** Sends one 2026-07-28 `server/discover`; true when the answer is a result naming a modern revision. */
async function servesModern(url: string): Promise<boolean> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'server/discover',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'server/discover',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
    signal: AbortSignal.timeout(DEADLINE_MS),
  });
  const text = await response.text();
  if (!response.ok) return false;
  return text.includes(MODERN) && text.includes('supportedVersions');
}
