// `sluice conformance-client` when the suite asks for a 2026-07-28-era client (MCP_CONFORMANCE_PROTOCOL_VERSION):
// SDK v2's `Client` (`@modelcontextprotocol/client` 2.x) over Sluice's `StreamableHttpClientTransport`. SDK v2 is
// a development dependency of Sluice, not a runtime one, so it is loaded only here, only when asked for, and its
// absence is a clear error. The Client negotiates the era (`server/discover`, falling back to `initialize`), puts
// the `_meta` envelope on every request, excludes tools whose `x-mcp-header` declarations are invalid, and passes
// the `Mcp-Param-*` headers; the transport adds the standard headers and never a session id.
import { StreamableHttpClientTransport } from '../client/index.js';
import { type AuthContext, conformanceAuth } from './conformance-auth.js';
import { runScenario } from './conformance-run.js';
import { echoSchema } from './conformance-schema-echo.js';

/** The part of SDK v2's `Client` this file uses. */
interface V2Client {
  connect(transport: unknown): Promise<void>;
  close(): Promise<void>;
  getProtocolEra(): string | undefined;
  listTools(): Promise<{ tools: { name: string; inputSchema?: unknown }[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<{ isError?: boolean }>;
  listResources(): Promise<{ resources: { uri: string }[] }>;
  readResource(params: { uri: string }): Promise<unknown>;
  listPrompts(): Promise<{ prompts: { name: string; arguments?: { name: string; required?: boolean }[] }[] }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<unknown>;
  getServerCapabilities(): { tools?: unknown; resources?: unknown; prompts?: unknown } | undefined;
  setRequestHandler(method: string, handler: (request: unknown) => Promise<unknown>): void;
}
type V2ClientClass = new (
  info: { name: string; version: string },
  options: { capabilities: Record<string, unknown>; versionNegotiation: { mode: 'auto' } },
) => V2Client;

/** What the suite may pass in MCP_CONFORMANCE_CONTEXT. */
interface Context extends AuthContext {
  readonly toolCalls?: readonly { name: string; arguments?: Record<string, unknown> }[];
}

type Scenario = (client: V2Client, context: Context) => Promise<void>;

const scenarios: Record<string, Scenario> = {
  tools_call: async (client) => {
    const result = await client.callTool({ name: 'add_numbers', arguments: { a: 5, b: 3 } });
    if (result.isError === true) throw new Error('add_numbers failed');
  },
  // The standard headers on every method that has them: list and use each capability the server offers.
  'http-standard-headers': async (client) => {
    await exerciseEverything(client);
  },
  // The suite names the calls to make; the Client mirrors `x-mcp-header` arguments into Mcp-Param-* headers.
  'http-custom-headers': async (client, context) => {
    await client.listTools();
    for (const call of context.toolCalls ?? []) {
      await client.callTool({ name: call.name, ...(call.arguments ? { arguments: call.arguments } : {}) });
    }
  },
  // MRTR (MCP 2026-07-28 basic/patterns/mrtr): the Client itself fulfils `input_required` results with the
  // handlers registered below (declared in its capabilities) and retries with a new request id, the same keys in
  // `inputResponses` and `requestState` echoed untouched. The scenario checks that across a flow with state, one
  // without, an unrelated call in between (which must carry neither field) and a result with no `resultType`.
  'sep-2322-client-request-state': async (client) => {
    const { tools } = await client.listTools();
    const order = [
      'test_mrtr_echo_state',
      'test_mrtr_unrelated',
      'test_mrtr_no_state',
      'test_mrtr_no_result_type',
    ];
    const names = new Set(tools.map((t) => t.name));
    for (const name of [
      ...order.filter((n) => names.has(n)),
      ...[...names].filter((n) => !order.includes(n)),
    ]) {
      const result = await client.callTool({ name, arguments: {} });
      if (result.isError === true) throw new Error(`${name} failed`);
    }
  },
  'json-schema-2020-12-preservation': async (client) => {
    const { tools } = await client.listTools();
    await echoSchema(tools, (name, args) => client.callTool({ name, arguments: args }));
  },
  // Tools with invalid declarations are dropped from tools/list by the Client: calling every listed tool must
  // reach only the valid ones.
  'http-invalid-tool-headers': async (client) => {
    const { tools } = await client.listTools();
    for (const tool of tools)
      await client.callTool({ name: tool.name, arguments: sampleArguments(tool.inputSchema) });
  },
};

/** Every `auth/*` scenario: authorize (the transport does it on the first 401), then list and call the tools. */
async function authScenario(client: V2Client): Promise<void> {
  const { tools } = await client.listTools();
  for (const tool of tools) await client.callTool({ name: tool.name, arguments: {} });
}

/** Lists and uses every tool, resource and prompt the server declares (errors in optional parts reported). */
async function exerciseEverything(client: V2Client): Promise<void> {
  const capabilities = client.getServerCapabilities() ?? {};
  if (capabilities.tools !== undefined) {
    const { tools } = await client.listTools();
    for (const tool of tools)
      await client.callTool({ name: tool.name, arguments: sampleArguments(tool.inputSchema) });
  }
  if (capabilities.resources !== undefined) {
    const { resources } = await client.listResources();
    for (const resource of resources) await client.readResource({ uri: resource.uri });
  }
  if (capabilities.prompts !== undefined) {
    const { prompts } = await client.listPrompts();
    for (const prompt of prompts) {
      const args: Record<string, string> = {};
      for (const a of prompt.arguments ?? []) args[a.name] = 'x';
      await client.getPrompt({ name: prompt.name, arguments: args });
    }
  }
}

/** Content for an elicitation: `true` for boolean properties, a sample string or number otherwise. */
function acceptAll(schema: unknown): Record<string, unknown> {
  return sampleArguments(schema);
}

/** Arguments that satisfy a simple object schema: a sample value per declared property. */
function sampleArguments(schema: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties;
  if (properties === undefined || properties === null || typeof properties !== 'object') return out;
  for (const [key, property] of Object.entries(properties)) {
    const type = property?.type;
    out[key] = type === 'integer' || type === 'number' ? 1 : type === 'boolean' ? true : 'sample';
  }
  return out;
}

/** Runs one 2026-07-28-era scenario; resolves to the process exit code. */
export async function runModern(url: string, name: string, watchdogMs: number): Promise<number> {
  let ClientClass: V2ClientClass;
  try {
    const specifier = '@modelcontextprotocol/client';
    ({ Client: ClientClass } = (await import(specifier)) as { Client: V2ClientClass });
  } catch (error) {
    process.stderr.write(
      `conformance-client: the 2026-07-28 era needs SDK v2 (npm install @modelcontextprotocol/client): ${String(error)}\n`,
    );
    return 2;
  }
  let context: Context = {};
  try {
    context = JSON.parse(process.env['MCP_CONFORMANCE_CONTEXT'] ?? '{}') as Context;
  } catch {
    // No usable context: scenarios that need one fail visibly on their own.
  }
  const client = new ClientClass(
    { name: 'sluice-conformance-client', version: '0.1.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } },
  );
  // Elicitation requests (pushed on a legacy session, or embedded in an `input_required` result) are accepted
  // with a value for every boolean property the server asked for.
  client.setRequestHandler('elicitation/create', async (request) => ({
    action: 'accept',
    content: acceptAll((request as { params?: { requestedSchema?: unknown } }).params?.requestedSchema),
  }));
  const transport = new StreamableHttpClientTransport(
    new URL(url),
    conformanceAuth(name, context as AuthContext),
  );
  const scenario =
    scenarios[name] ??
    (name.startsWith('auth/') ? authScenario : undefined) ??
    (async (c: V2Client) => void (await c.listTools()));
  return runScenario(name, watchdogMs, client, transport, () => scenario(client, context));
}
