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
import { until } from '../helpers/http.js';
import { startSdkServer } from '../helpers/sdk-reference-server.js';
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

/** The error `call` fails with; the test fails if it succeeds instead, or outlives the deadline. */
function failureOf(call: Promise<unknown>, label: string): Promise<unknown> {
  return withDeadline(
    call.then(
      () => assert.fail('the call should fail'),
      (e: unknown) => e,
    ),
    DEADLINE_MS,
    label,
  );
}

/** A server started before a suite's tests, with a Client connected to it; both closed after them. */
interface Suite<S> {
  server: S;
  c: Connected;
}

function connectedSuite<S extends { url: string; close(): Promise<void> }>(
  start: () => Promise<S>,
  mode: 'auto' | 'legacy',
): Suite<S> {
  const suite: Partial<Suite<S>> = {};
  before(async () => {
    suite.server = await start();
    suite.c = await connect(suite.server.url, mode);
  });
  after(async () => {
    await suite.c?.client.close();
    await suite.server?.close();
  });
  return suite as Suite<S>;
}

/** Runs `body` with a Client of its own, closed afterwards whatever happens. */
async function withClient(url: string, mode: 'auto' | 'legacy', body: (c: Connected) => Promise<void>) {
  const c = await connect(url, mode);
  try {
    await body(c);
  } finally {
    await c.client.close();
  }
}

/** Calls the echo tool within the deadline and returns its text. */
async function echo(c: Connected, args: Record<string, unknown>, label: string): Promise<string> {
  return textOf(await withDeadline(c.client.callTool({ name: 'echo', arguments: args }), DEADLINE_MS, label));
}

function posts(server: V2Server, rpcMethod: string): V2Server['log'] {
  return server.log.filter((r) => r.method === 'POST' && r.headers['mcp-method'] === rpcMethod);
}

describe('SDK v2 Client over Sluice transport, SDK v2 server, 2026-07-28 era', () => {
  const suite = connectedSuite(startV2Server, 'auto');

  test('negotiates the modern era; requests carry the standard headers and never a session id', async () => {
    const { server, c } = suite;
    assert.equal(c.client.getProtocolEra(), 'modern');
    const list = await withDeadline(c.client.listTools(), DEADLINE_MS, 'tools/list');
    assert.ok(list.tools.some((t) => t.name === 'echo'));
    const text = await echo(c, { text: 'hi', region: 'eu-west-1' }, 'tools/call echo');
    assert.equal(text, 'hi|eu-west-1');
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
    const { server, c } = suite;
    const region = ' Zürich ';
    const text = await echo(c, { text: 'x', region }, 'tools/call echo (non-ASCII)');
    assert.equal(text, `x|${region}`);
    const sent = posts(server, 'tools/call').at(-1);
    const expected = `=?base64?${Buffer.from(region, 'utf8').toString('base64')}?=`;
    assert.equal(sent?.headers['mcp-param-region'], expected);
  });

  test('progress arrives; aborting cancels by closing the request, with no notifications/cancelled', async () => {
    const { server, c } = suite;
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
    await until(() => server.aborted.includes('slow'), DEADLINE_MS, 'the handler was aborted');
    assert.equal(posts(server, 'notifications/cancelled').length, 0);
    assert.equal(c.transport.inspect().pendingRequestIds.length, 0);
    assert.equal(c.transport.inspect().httpRequestsInFlight, 0);
  });

  test('a stream broken mid-way fails the request at once with RequestLostError (no resume, no resend)', async () => {
    const { server, c } = suite;
    const before = server.log.length;
    const call = c.client.callTool(
      { name: 'drop', arguments: { steps: 100, delayMs: 20 } },
      { onprogress: () => undefined, timeout: 60_000 },
    );
    const error = await failureOf(call, 'broken call');
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
  const suite = connectedSuite(startV2Server, 'legacy');

  test('the default mode initializes; no 2026 header is sent', async () => {
    const { server, c } = suite;
    assert.equal(c.client.getProtocolEra(), 'legacy');
    const text = await echo(c, { text: 'old' }, 'tools/call legacy');
    assert.equal(text, 'old|');
    assert.ok(server.log.some((r) => r.body.includes('"initialize"')));
    for (const r of server.log) assert.equal(r.headers['mcp-method'], undefined);
  });

  test('a stream cut before any event id fails at once with ResumeImpossibleError, not at the timeout', async () => {
    const { c } = suite;
    const call = c.client.callTool(
      { name: 'drop', arguments: { steps: 100, delayMs: 20 } },
      { onprogress: () => undefined, timeout: 60_000 },
    );
    // The deadline (15 s) is far below the request's 60 s timeout.
    const error = await failureOf(call, 'legacy broken call');
    assert.equal(
      (error as { data?: { sluiceCode?: string } }).data?.sluiceCode,
      'SLUICE_CLIENT_RESUME_IMPOSSIBLE',
    );
    assert.ok(c.errors.some((e) => e instanceof ResumeImpossibleError));
  });
});

describe('SDK v2 Client over Sluice transport, SDK v1 server (legacy only)', () => {
  const suite = connectedSuite(startSdkServer, 'auto');

  test('auto mode falls back to the legacy handshake and works with a session', async () => {
    const { c } = suite;
    assert.equal(c.client.getProtocolEra(), 'legacy');
    assert.ok(c.transport.sessionId, 'the legacy session id was adopted');
    const text = await echo(c, { text: 'v1' }, 'tools/call on v1');
    assert.match(text, /v1/);
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
    await withClient(server.url, 'legacy', async (c) => {
      assert.equal(c.client.getProtocolEra(), 'legacy');
      assert.ok(c.transport.sessionId);
      const text = await echo(c, { text: 'legacy' }, 'legacy tools/call on Sluice');
      assert.match(text, /legacy/);
    });
  });

  test('auto mode: tools work in whichever era Sluice serves (legacy fallback when it serves only 2025)', async () => {
    await withClient(server.url, 'auto', async (c) => {
      const text = await echo(c, { text: 'sluice' }, 'tools/call on Sluice');
      assert.match(text, /sluice/);
      if (c.client.getProtocolEra() === 'legacy') assert.ok(c.transport.sessionId);
    });
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
    await withClient(server.url, 'auto', async (c) => {
      assert.equal(c.client.getProtocolEra(), 'modern');
      const text = await echo(c, { text: 'modern' }, 'modern tools/call on Sluice');
      assert.match(text, /modern/);
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
      await until(
        () => server.probe.aborted.includes('slow:30000'),
        DEADLINE_MS,
        'the handler was aborted by the closed request',
      );
      assert.equal(c.transport.inspect().pendingRequestIds.length, 0);
    });
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
