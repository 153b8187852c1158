/**
 * The cluster hop's trace headers (core/observe/hop-trace.ts): only valid W3C values go on to the
 * owner; with tracing, the hop's own span (a child of the client's header context) is what goes on.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HopTracer } from '../../src/core/observe/hop-trace.js';
import { api, testTracing, traceparent } from '../helpers/otel.js';

const header = (h: Record<string, string>) => (n: string) => h[n];

describe('cluster hop trace headers', () => {
  test('without tracing: valid values pass (normalized), malformed ones are dropped', () => {
    const hop = new HopTracer(undefined);
    const tp = traceparent(0x11, 0x22);
    assert.deepEqual(
      hop.begin(
        header({ traceparent: tp, tracestate: ' a=1 , b=2', baggage: 'k = v' }),
        'http://o:1/mcp',
        'POST',
      ).headers,
      { traceparent: tp, tracestate: 'a=1,b=2', baggage: 'k=v' },
    );
    assert.deepEqual(
      hop.begin(
        header({ traceparent: 'nope', tracestate: 'a=1', baggage: 'k=%zz' }),
        'http://o:1/mcp',
        'POST',
      ).headers,
      {},
    );
  });

  test('with tracing: a sluice.forward span, child of the header context, is sent on', () => {
    const tracing = testTracing();
    const hop = new HopTracer({ api, tracer: tracing.provider.getTracer('hop') });
    const h = hop.begin(
      header({ traceparent: traceparent(0x33, 0x44), baggage: 'bad baggage' }),
      'http://[::1]:8123/mcp',
      'GET',
    );
    h.end(200);
    const span = tracing.spans().find((s) => s.name === 'sluice.forward');
    assert.ok(span !== undefined);
    assert.equal(span.parentSpanContext?.spanId, traceparent(0x33, 0x44).slice(36, 52));
    assert.equal(span.attributes['server.address'], '::1');
    assert.equal(span.attributes['server.port'], 8123);
    assert.equal(span.attributes['http.response.status_code'], 200);
    assert.equal(
      h.headers['traceparent'],
      `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`,
    );
    assert.equal(h.headers['baggage'], undefined);
  });
});
