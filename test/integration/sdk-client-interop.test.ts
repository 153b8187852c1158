/**
 * The official SDK client, with its own StreamableHTTPClientTransport, against
 * the real `sluice serve`: the pairing most users will actually run.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  LoggingMessageNotificationSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { withDeadline } from '../helpers/deadline.js';
import { type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

const CALL_DEADLINE_MS = 15_000;

let server: SpawnedServe | undefined;
let client: Client | undefined;

function connected(): Client {
  assert.ok(client, 'client not connected');
  return client;
}

function textOf(result: unknown): string {
  const parsed = CallToolResultSchema.parse(result);
  const first = parsed.content[0];
  assert.ok(first && first.type === 'text', `expected text content, got ${JSON.stringify(parsed.content)}`);
  return first.text;
}

before(async () => {
  server = await spawnServe();
  client = new Client({ name: 'sluice-interop-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(server.url));
  await withDeadline(client.connect(transport), CALL_DEADLINE_MS, 'SDK client connecting');
});

after(async () => {
  try {
    if (client) await withDeadline(client.close(), 5_000, 'SDK client closing');
  } finally {
    await server?.close();
  }
});

test('tools/list offers the demo tools and the conformance fixtures', async () => {
  const { tools } = await withDeadline(connected().listTools(), CALL_DEADLINE_MS, 'tools/list');
  const names = tools.map((t) => t.name);
  // test_simple_text and test_error_handling are listed explicitly because the
  // conformance checks for them also pass when the tool is missing.
  for (const name of ['reindex', 'echo', 'sleep', 'flood', 'test_reconnection', 'test_simple_text']) {
    assert.ok(names.includes(name), `tools/list lacks ${name}: ${names.join(', ')}`);
  }
  assert.ok(names.includes('test_error_handling'));
  const reindex = tools.find((t) => t.name === 'reindex');
  assert.deepEqual(reindex?.inputSchema.required, ['corpus']);
});

test('reindex streams its progress, in order, before the result', async () => {
  const docs = 25;
  const seen: Progress[] = [];
  let seenAtResult = -1;
  const result = await withDeadline(
    connected()
      .callTool(
        { name: 'reindex', arguments: { corpus: 'handbook', docs, delayMs: 2 } },
        CallToolResultSchema,
        {
          onprogress: (p) => {
            seen.push(p);
          },
        },
      )
      .then((r) => {
        seenAtResult = seen.length;
        return r;
      }),
    CALL_DEADLINE_MS,
    'tools/call reindex',
  );
  assert.equal(textOf(result), `reindexed ${docs} docs`);
  assert.equal(seenAtResult, docs, 'every progress notification must arrive before the result');
  seen.forEach((p, i) => {
    assert.equal(p.progress, i + 1, 'progress values must increase by one, in order');
    assert.equal(p.total, docs);
    assert.equal(p.message, `indexed ${i + 1}/${docs} of handbook`);
  });
});

test('echo returns its input', async () => {
  const text = 'héllo, "sluice" \u{1f30a}\nline two';
  const result = await withDeadline(
    connected().callTool({ name: 'echo', arguments: { text } }),
    CALL_DEADLINE_MS,
    'tools/call echo',
  );
  assert.equal(textOf(result), text);
});

test('flood: every notification of a fast burst arrives, with its payload', async () => {
  const count = 2_000;
  let received = 0;
  let inOrder = true;
  let payloadOk = true;
  const result = await withDeadline(
    connected().callTool({ name: 'flood', arguments: { count, payloadBytes: 64 } }, CallToolResultSchema, {
      onprogress: (p) => {
        received++;
        if (p.progress !== received) inOrder = false;
        if (p.message !== 'x'.repeat(64)) payloadOk = false;
      },
    }),
    CALL_DEADLINE_MS,
    'tools/call flood',
  );
  assert.equal(textOf(result), `sent ${count}`);
  assert.equal(received, count);
  assert.ok(inOrder, 'progress arrived out of order');
  assert.ok(payloadOk, 'a progress message lost its payload');
});

test('test_reconnection: the SDK client resumes a stream the server closed and still gets the result', async () => {
  const result = await withDeadline(
    connected().callTool({ name: 'test_reconnection', arguments: {} }),
    CALL_DEADLINE_MS,
    'tools/call test_reconnection',
  );
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.match(textOf(result), /Reconnection test completed/);
});

test('a bad input comes back as a tool error, not a protocol error', async () => {
  const result = await withDeadline(
    connected().callTool({ name: 'flood', arguments: { count: -1 } }),
    CALL_DEADLINE_MS,
    'tools/call flood with bad input',
  );
  assert.equal(result.isError, true);
});

test('logging/setLevel filters the log messages a tool sends during the call', async () => {
  const c = connected();
  const logs: unknown[] = [];
  c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params.data);
  });
  const call = () =>
    withDeadline(
      c.callTool({ name: 'test_tool_with_logging', arguments: {} }),
      CALL_DEADLINE_MS,
      'tools/call test_tool_with_logging',
    );
  await withDeadline(c.setLoggingLevel('error'), CALL_DEADLINE_MS, 'logging/setLevel error');
  await call();
  assert.deepEqual(logs, [], 'info logs must be suppressed at level error');
  await withDeadline(c.setLoggingLevel('debug'), CALL_DEADLINE_MS, 'logging/setLevel debug');
  await call();
  // They travel on the call's own stream, so all three are in before the result.
  assert.deepEqual(logs, ['Tool execution started', 'Tool processing data', 'Tool execution completed']);
});
