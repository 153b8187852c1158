/**
 * Server spans with a real OpenTelemetry SDK: one span per JSON-RPC request named and attributed
 * per the OpenTelemetry MCP semantic conventions, its parent from `_meta` (both eras) or the HTTP
 * `traceparent` header, a link to the HTTP context when both exist, error types, the tool running
 * inside the span, malformed trace context ignored, and the semantic-convention metrics in /metrics.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { z } from 'zod';
import { type CreateServer, type Served, serve } from '../../src/server/index.js';
import { RawSession, rpc, send, toolCall } from '../helpers/http.js';
import { MODERN, modernBody, modernSend } from '../helpers/modern.js';
import { api, type TestTracing, testTracing, traceparent } from '../helpers/otel.js';
import { serveFetch } from '../helpers/serve-fetch.js';

const tracing: TestTracing = testTracing();
/** What the tools saw of the context they ran in. */
const seen: { baggage: string | undefined; activeSpan: string | undefined }[] = [];

function createTraced(): McpServer {
  const server = new McpServer({ name: 'traced', version: '1.0.0' });
  const toolTracer = tracing.provider.getTracer('tool');
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => {
    const ctx = api.context.active();
    seen.push({
      baggage: api.propagation.getBaggage(ctx)?.getEntry('k')?.value,
      activeSpan: api.trace.getSpanContext(ctx)?.spanId,
    });
    toolTracer.startSpan('tool-work').end();
    return { content: [{ type: 'text', text }] };
  });
  server.registerTool('fails', {}, async () => ({ content: [{ type: 'text', text: 'no' }], isError: true }));
  server.registerTool('throws', {}, async () => {
    throw new Error('boom');
  });
  // A prompt whose handler throws: the SDK answers a JSON-RPC error (-32603), not a result.
  server.registerPrompt('broken', {}, () => {
    throw new Error('prompt store down');
  });
  return server;
}

const create = createTraced as unknown as CreateServer;

describe('server spans (OpenTelemetry SDK, in-memory exporter)', () => {
  let served: Served;
  let session: RawSession;
  before(async () => {
    served = await serve({
      createServer: create,
      port: 0,
      host: '127.0.0.1',
      tracing: { api, tracer: tracing.provider.getTracer('sluice') },
    });
    session = new RawSession(served.url);
    await session.init();
  });
  after(async () => {
    await served.close({ graceMs: 100 });
  });

  test('parent from _meta.traceparent, link to the HTTP header context, convention attributes', async () => {
    tracing.reset();
    const body = toolCall('echo', { text: 'hi' }, 'req-1');
    body.params._meta = { traceparent: traceparent(0xa1, 0xb1), tracestate: 'vendor=x', baggage: 'k=v%20w' };
    const r = await session.post(body, { traceparent: traceparent(0xa2, 0xb2) });
    assert.equal(r.status, 200);
    const span = await tracing.span('tools/call echo');
    assert.equal(span.kind, SpanKind.SERVER);
    assert.equal(span.spanContext().traceId, traceparent(0xa1, 0xb1).slice(3, 35));
    assert.equal(span.parentSpanContext?.spanId, traceparent(0xa1, 0xb1).slice(36, 52));
    assert.equal(span.parentSpanContext?.traceState?.get('vendor'), 'x');
    assert.equal(span.links.length, 1);
    assert.equal(span.links[0]?.context.spanId, traceparent(0xa2, 0xb2).slice(36, 52));
    const a = span.attributes;
    assert.equal(a['mcp.method.name'], 'tools/call');
    assert.equal(a['gen_ai.tool.name'], 'echo');
    assert.equal(a['gen_ai.operation.name'], 'execute_tool');
    assert.equal(a['jsonrpc.request.id'], 'req-1');
    assert.equal(a['mcp.session.id'], session.sid);
    assert.equal(a['mcp.protocol.version'], '2025-11-25');
    assert.equal(a['network.transport'], 'tcp');
    assert.equal(a['server.address'], '127.0.0.1');
    assert.equal(a['server.port'], served.port);
    assert.equal(a['error.type'], undefined);
    assert.equal(span.status.code, SpanStatusCode.UNSET);
    // The tool ran inside the span: its own span is a child, and the _meta baggage reached it.
    const work = await tracing.span('tool-work');
    assert.equal(work.parentSpanContext?.spanId, span.spanContext().spanId);
    assert.equal(seen.at(-1)?.activeSpan, span.spanContext().spanId);
    assert.equal(seen.at(-1)?.baggage, 'v w');
  });

  test('parent from the HTTP traceparent header when _meta carries none; no link', async () => {
    tracing.reset();
    const r = await session.post(toolCall('echo', { text: 'x' }), { traceparent: traceparent(0xc1, 0xd1) });
    assert.equal(r.status, 200);
    const span = await tracing.span('tools/call echo');
    assert.equal(span.spanContext().traceId, traceparent(0xc1, 0xd1).slice(3, 35));
    assert.equal(span.parentSpanContext?.spanId, traceparent(0xc1, 0xd1).slice(36, 52));
    assert.equal(span.links.length, 0);
  });

  test('error types: tool_error for isError and a thrown tool, the JSON-RPC code otherwise', async () => {
    tracing.reset();
    await session.post(toolCall('fails', {}));
    await session.post(toolCall('throws', {}));
    const prompt = await session.post(rpc('prompts/get', { name: 'broken' }));
    assert.ok('error' in prompt.json(), prompt.text);
    const missing = await session.post(rpc('resources/list', {}));
    assert.equal(missing.json().error.code, -32601);
    const fails = await tracing.span('tools/call fails');
    assert.equal(fails.attributes['error.type'], 'tool_error');
    assert.equal(fails.status.code, SpanStatusCode.ERROR);
    const throws = await tracing.span('tools/call throws');
    assert.equal(throws.attributes['error.type'], 'tool_error');
    const prompts = await tracing.span('prompts/get broken');
    assert.equal(prompts.attributes['gen_ai.prompt.name'], 'broken');
    assert.equal(prompts.attributes['error.type'], '-32603');
    assert.equal(prompts.attributes['rpc.response.status_code'], '-32603');
    assert.equal(prompts.status.code, SpanStatusCode.ERROR);
    assert.match(prompts.status.message ?? '', /prompt store down/);
    const resources = await tracing.span('resources/list');
    assert.equal(resources.attributes['error.type'], '-32601');
  });

  test('malformed traceparent, tracestate and baggage are ignored, in _meta and in headers', async () => {
    const bad = [
      'garbage',
      '00-00000000000000000000000000000000-00000000000000b1-01',
      '00-000000000000000000000000000000a1-0000000000000000-01',
      'ff-000000000000000000000000000000a1-00000000000000b1-01',
      '00-000000000000000000000000000000A1-00000000000000b1-01',
      '00-000000000000000000000000000000a1-00000000000000b1-01-extra',
      `${traceparent(0xa1, 0xb1)} `.repeat(3),
    ];
    for (const tp of bad) {
      tracing.reset();
      const body = toolCall('echo', { text: 'x' });
      body.params._meta = { traceparent: tp, tracestate: 'BAD KEY=1', baggage: 'no equals sign,=x' };
      const r = await session.post(body, { traceparent: tp, baggage: 'k=%zz' });
      assert.equal(r.status, 200, `${tp}: ${r.text}`);
      assert.deepEqual(r.json().result.content, [{ type: 'text', text: 'x' }]);
      const span = await tracing.span('tools/call echo');
      assert.equal(span.parentSpanContext, undefined, `${tp} must not become a parent`);
      assert.equal(span.links.length, 0);
      assert.equal(seen.at(-1)?.baggage, undefined);
    }
    // A valid traceparent beside a malformed tracestate: the parent is kept, the tracestate dropped.
    tracing.reset();
    const body = toolCall('echo', { text: 'x' });
    body.params._meta = { traceparent: traceparent(0xe1, 0xf1), tracestate: 'a=1,a=2', baggage: 'k=ok' };
    await session.post(body);
    const span = await tracing.span('tools/call echo');
    assert.equal(span.parentSpanContext?.spanId, traceparent(0xe1, 0xf1).slice(36, 52));
    assert.equal(span.parentSpanContext?.traceState, undefined);
    assert.equal(seen.at(-1)?.baggage, 'ok');
  });

  test('2026-07-28 requests: parent from _meta, version from _meta, no session id', async () => {
    tracing.reset();
    const body = modernBody(
      'tools/call',
      { name: 'echo', arguments: { text: 'm' } },
      { traceparent: traceparent(0x71, 0x72) },
    );
    const r = await modernSend(served.url, body, { traceparent: traceparent(0x73, 0x74) });
    assert.equal(r.status, 200, r.text);
    const span = await tracing.span('tools/call echo');
    assert.equal(span.parentSpanContext?.spanId, traceparent(0x71, 0x72).slice(36, 52));
    assert.equal(span.links[0]?.context.spanId, traceparent(0x73, 0x74).slice(36, 52));
    assert.equal(span.attributes['mcp.protocol.version'], MODERN);
    assert.equal(span.attributes['mcp.session.id'], undefined);
    assert.equal(span.attributes['jsonrpc.request.id'], String(body.id));
    // Sluice's own internal requests (the tools/list it asks for x-mcp-header) make no span.
    assert.equal(tracing.spans().filter((s) => s.name === 'tools/list').length, 0);
    const discover = await modernSend(
      served.url,
      modernBody('server/discover', {}, { traceparent: traceparent(0x75, 0x76) }),
    );
    assert.equal(discover.status, 200, discover.text);
    const d = await tracing.span('server/discover');
    assert.equal(d.parentSpanContext?.spanId, traceparent(0x75, 0x76).slice(36, 52));
  });

  test('initialize gets a span, and the semantic-convention metrics are in /metrics', async () => {
    tracing.reset();
    const s2 = new RawSession(served.url);
    await s2.init();
    await s2.post(toolCall('echo', { text: 'y' }));
    const init = await tracing.span('initialize');
    assert.equal(init.attributes['mcp.protocol.version'], '2025-11-25');
    assert.ok([200, 204].includes((await s2.delete()).status));
    const text = served.handler.metrics();
    assert.match(
      text,
      /mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="echo",mcp_protocol_version="2025-11-25"\} \d+/,
    );
    assert.match(
      text,
      /mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="fails",error_type="tool_error",mcp_protocol_version="2025-11-25"\} 1/,
    );
    assert.match(
      text,
      /mcp_server_operation_duration_seconds_count\{mcp_method_name="resources\/list",error_type="-32601"/,
    );
    assert.match(text, /mcp_server_session_duration_seconds_count\{mcp_protocol_version="2025-11-25"\} 1/);
  });
});

describe('the web-standard binding (createFetchHandler)', () => {
  test('the same span, parented from _meta, linked to the header', async () => {
    const served = await serveFetch({
      createServer: create,
      port: 0,
      host: '127.0.0.1',
      tracing: { api, tracer: tracing.provider.getTracer('sluice') },
    });
    try {
      tracing.reset();
      const s = new RawSession(served.url);
      await s.init();
      const body = toolCall('echo', { text: 'f' }, 'fetch-1');
      body.params._meta = { traceparent: traceparent(0x61, 0x62) };
      const r = await s.post(body, { traceparent: traceparent(0x63, 0x64) });
      assert.equal(r.status, 200, r.text);
      const span = await tracing.span('tools/call echo');
      assert.equal(span.parentSpanContext?.spanId, traceparent(0x61, 0x62).slice(36, 52));
      assert.equal(span.links[0]?.context.spanId, traceparent(0x63, 0x64).slice(36, 52));
      assert.equal(span.attributes['jsonrpc.request.id'], 'fetch-1');
      assert.equal(span.attributes['mcp.session.id'], s.sid);
    } finally {
      await served.close({ graceMs: 100 });
    }
  });
});

describe('tracing configured but no tracer provider registered', () => {
  test('no span work, requests unaffected; a provider registered later is used at once', async () => {
    const served = await serve({ createServer: create, port: 0, host: '127.0.0.1', tracing: { api } });
    try {
      const s = new RawSession(served.url);
      await s.init();
      const r = await s.post(toolCall('echo', { text: 'z' }), { traceparent: traceparent(0x91, 0x92) });
      assert.equal(r.status, 200);
      // The tool runs in the caller's context untouched: no span of Sluice's is active there.
      assert.equal(seen.at(-1)?.activeSpan, undefined);
      tracing.reset();
      assert.ok(api.trace.setGlobalTracerProvider(tracing.provider));
      try {
        await s.post(toolCall('echo', { text: 'z' }), { traceparent: traceparent(0x91, 0x92) });
        const span = await tracing.span('tools/call echo');
        assert.equal(span.parentSpanContext?.spanId, traceparent(0x91, 0x92).slice(36, 52));
      } finally {
        api.trace.disable();
      }
    } finally {
      await served.close({ graceMs: 100 });
    }
  });
});

describe('the tracing option is validated once', () => {
  test('something that is not the API module is refused at creation', async () => {
    await assert.rejects(
      serve({ createServer: create, port: 0, tracing: { api: {} as never } }),
      /tracing must be false or \{ api, tracer\? \}/,
    );
  });
});

void send;
