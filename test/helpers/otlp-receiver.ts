/**
 * A minimal OTLP/HTTP trace receiver on 127.0.0.1:0 for the tests: accepts `POST /v1/traces` with
 * the JSON encoding (what `@opentelemetry/exporter-trace-otlp-http` sends) and keeps every span it
 * was sent, flattened with its resource's `service.name` and the process that sent it.
 */
import { createServer, type Server } from 'node:http';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  events: { name: string; attributes: Record<string, unknown> }[];
  /** The exporting process's resource attributes. */
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Content types of the export requests received. */
  readonly contentTypes: string[];
  /** Waits (bounded) until `pred` holds for the spans received. */
  until(pred: (spans: ReceivedSpan[]) => boolean, ms: number, label: string): Promise<void>;
  close(): Promise<void>;
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

function anyValue(v: Record<string, unknown>): unknown {
  if ('stringValue' in v) return v['stringValue'];
  if ('intValue' in v) return Number(v['intValue']);
  if ('doubleValue' in v) return v['doubleValue'];
  if ('boolValue' in v) return v['boolValue'];
  return v;
}

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.push(String(req.headers['content-type']));
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: {
            resource?: { attributes?: KeyValue[] };
            scopeSpans?: { spans?: Record<string, unknown>[] }[];
          }[];
        };
        for (const rs of body.resourceSpans ?? []) {
          const resource = attrs(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              const parent = s['parentSpanId'] as string | undefined;
              spans.push({
                traceId: String(s['traceId']),
                spanId: String(s['spanId']),
                parentSpanId: parent === undefined || parent === '' ? undefined : parent,
                name: String(s['name']),
                kind: Number(s['kind']),
                attributes: attrs(s['attributes'] as KeyValue[] | undefined),
                links: ((s['links'] as { traceId: string; spanId: string }[] | undefined) ?? []).map((l) => ({
                  traceId: l.traceId,
                  spanId: l.spanId,
                })),
                events: ((s['events'] as { name: string; attributes?: KeyValue[] }[] | undefined) ?? []).map(
                  (e) => ({ name: e.name, attributes: attrs(e.attributes) }),
                ),
                resource,
              });
            }
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    contentTypes,
    async until(pred, ms, label) {
      const end = Date.now() + ms;
      while (!pred(spans)) {
        if (Date.now() > end)
          throw new Error(`${label}: not within ${ms} ms; spans: ${spans.map((s) => s.name).join(', ')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
