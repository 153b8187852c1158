/**
 * Loaded with `node --import` into a spawned `sluice serve --otel` (as an application's OpenTelemetry
 * setup would be): registers a tracer provider exporting every span at once over OTLP/HTTP (JSON) to
 * the receiver named by SLUICE_TEST_OTLP_URL, and the AsyncLocalStorage context manager.
 */
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

const url = process.env['SLUICE_TEST_OTLP_URL'];
if (url !== undefined && url !== '') {
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  api.trace.setGlobalTracerProvider(provider);
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}
