// A consumer of the published types: compiled against dist/ through the package's own "exports"
// (self-reference), with skipLibCheck off, so every public .d.ts must type-check on its own after
// stripInternal. Run by test/unit/public-types.test.ts after a build.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  AlreadyStartedError,
  InvalidOptionError as ClientInvalidOptionError,
  idempotencyMeta,
  type SluiceClientErrorCode,
  StreamableHttpClientTransport,
  type TransportSnapshot,
} from 'sluice/client';
import {
  type CloseReport,
  createMcpHandler,
  DEFAULT_REPLAY_BUDGET,
  DEFAULT_REPLAY_LIMITS,
  InvalidOptionError,
  type McpHandler,
  MemoryEventStore,
  type ServerOptions,
  type SluiceErrorCode,
  serve,
  sharedJsonSchemaValidator,
  staticBearer,
} from 'sluice/server';

const options: ServerOptions = { replay: DEFAULT_REPLAY_LIMITS, replayBudget: DEFAULT_REPLAY_BUDGET };
const handler: McpHandler = createMcpHandler({
  ...options,
  authenticate: staticBearer('a-long-enough-token'),
  eventStore: new MemoryEventStore(),
  createServer: () =>
    new McpServer({ name: 'x', version: '1' }, { jsonSchemaValidator: sharedJsonSchemaValidator() }),
});
const report: Promise<CloseReport> = handler.close({ graceMs: 1 });
const served = serve({ createServer: () => new McpServer({ name: 'x', version: '1' }), port: 0 });

const transport = new StreamableHttpClientTransport(new URL('http://127.0.0.1:1/mcp'), {
  maxReconnectAttempts: 2,
});
const snapshot: TransportSnapshot = transport.inspect();
const client = new Client({ name: 'c', version: '1' });
const connected: Promise<void> = client.connect(transport);
const meta: Record<string, string> = idempotencyMeta('key');
const codes: [SluiceErrorCode, SluiceClientErrorCode] = [
  'SLUICE_INVALID_OPTION',
  'SLUICE_CLIENT_ALREADY_STARTED',
];
const sameClass: boolean =
  InvalidOptionError === ClientInvalidOptionError && new AlreadyStartedError().code === codes[1];

export { connected, meta, report, sameClass, served, snapshot };
