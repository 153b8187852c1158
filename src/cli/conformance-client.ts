// `sluice conformance-client URL`: the client the official MCP conformance suite drives
// (`conformance client --command "node dist/src/cli/main.js conformance-client"`). The suite starts a mock
// server per scenario, names the scenario in MCP_CONFORMANCE_SCENARIO and appends the URL as the last argv.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { isModernRevision, StreamableHttpClientTransport } from '../client/index.js';
import { type AuthContext, conformanceAuth, readContext } from './conformance-auth.js';
import { runModern } from './conformance-client-modern.js';
import { runScenario } from './conformance-run.js';
import { echoSchema } from './conformance-schema-echo.js';

type Scenario = (client: Client) => Promise<void>;

/** Under the suite's own 30 s per-scenario timeout. */
const WATCHDOG_MS = 20_000;

const scenarios: Record<string, Scenario> = {
  // The handshake itself is the test.
  initialize: async () => {},
  tools_call: async (client) => {
    const result = await client.callTool({ name: 'add_numbers', arguments: { a: 5, b: 3 } });
    if (result.isError === true) throw new Error(`add_numbers failed: ${JSON.stringify(result.content)}`);
  },
  // The server closes the tools/call stream after a priming event with `retry: 500`; the transport must wait
  // exactly that long and resume with GET + Last-Event-ID.
  'sse-retry': async (client) => {
    await client.listTools();
    await client.callTool({ name: 'test_reconnection', arguments: {} });
  },
  // SEP-1034: the SDK Client fills in schema defaults when `elicitation.form.applyDefaults` is declared.
  'elicitation-sep1034-client-defaults': async (client) => {
    await client.callTool({ name: 'test_client_elicitation_defaults', arguments: {} });
  },
  // SEP-1613: the tool's inputSchema as the client holds it, handed back verbatim; every 2020-12 keyword must
  // have survived the client's parsing.
  'json-schema-2020-12-preservation': async (client) => {
    const { tools } = await client.listTools();
    await echoSchema(tools, (name, args) => client.callTool({ name, arguments: args }));
  },
};

/** Every `auth/*` scenario: authorize (the transport does it on the first 401), then list and call the tools. */
async function authScenario(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  for (const tool of tools) await client.callTool({ name: tool.name, arguments: {} });
}

export async function main(argv: string[]): Promise<number> {
  const url = argv.at(-1);
  if (url === undefined || url.startsWith('-')) {
    process.stderr.write(
      'usage: sluice conformance-client URL   (scenario from $MCP_CONFORMANCE_SCENARIO)\n',
    );
    return 2;
  }
  const name = process.env['MCP_CONFORMANCE_SCENARIO'] ?? 'initialize';
  // The suite names the revision it tests (2025-11-25 unless told otherwise); the 2026-07-28 era runs on SDK v2.
  const revision = process.env['MCP_CONFORMANCE_PROTOCOL_VERSION'];
  if (revision !== undefined && isModernRevision(revision)) {
    const code = await runModern(url, name, WATCHDOG_MS);
    exitSoon();
    return code;
  }
  const scenario =
    scenarios[name] ??
    (name.startsWith('auth/') ? authScenario : undefined) ??
    (async (client: Client) => {
      // Unknown scenario: do the generic thing a client does, so the suite still sees a working handshake.
      await client.listTools();
    });
  const client = new Client(
    { name: 'sluice-conformance-client', version: '0.1.0' },
    // SDK 1.32 applies schema defaults only for `elicitation.form.applyDefaults`, not the older
    // `elicitation.applyDefaults` the suite's own example client declares.
    { capabilities: { elicitation: { form: { applyDefaults: true } } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} }));
  const transport = new StreamableHttpClientTransport(new URL(url), {
    protocol: client,
    ...conformanceAuth(name, readContext<AuthContext>()),
  });
  try {
    return await runScenario(name, WATCHDOG_MS, client, transport, () => scenario(client));
  } finally {
    exitSoon();
  }
}

/**
 * After close() nothing of the transport should keep the process alive. If something does, name it on
 * stderr (that is a bug to fix) and exit anyway: the suite could not end us and would hang instead.
 */
function exitSoon(): void {
  const t = setTimeout(() => {
    const handles = (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles();
    process.stderr.write(
      `conformance-client: still alive 3 s after close(), held by ${handles.map((h) => h.constructor.name).join(', ')}\n`,
    );
    process.exit(process.exitCode ?? 0);
  }, 3_000);
  t.unref();
}
