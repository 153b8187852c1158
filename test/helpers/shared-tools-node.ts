/**
 * A server as the README recommends for servers built per session or per request (one validator,
 * tools defined once with sharedTool and registered with registerSharedTools), as a child process
 * for promotion.test.ts (or, with argv[3] `register-tool`, its tool registered by registerTool in
 * createServer): serves on 127.0.0.1:0 with the answer mode given as argv[2] and prints
 * `shared-tools-node <url>` once listening. Only with SLUICE_SHARED_TOOLS_NODE=1: the test runner
 * loads every file under test/, and then it does nothing.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { registerSharedTools, serve, sharedJsonSchemaValidator, sharedTool } from '../../src/server/index.js';

const ECHO_INPUT = z.object({ text: z.string() });

if (process.env['SLUICE_SHARED_TOOLS_NODE'] === '1') await main();

async function main(): Promise<void> {
  const mode = process.argv[2];
  if (mode !== 'auto' && mode !== 'json' && mode !== 'sse') throw new Error(`mode: ${mode}`);
  const validator = sharedJsonSchemaValidator();
  const echo = sharedTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  // `register-tool`: the tool registered as most servers do, with registerTool inside createServer;
  // its schema built once, as the README advises (a raw shape would add zod's own per-request
  // objects, which is not what this measures).
  const plain = process.argv[3] === 'register-tool';
  const served = await serve({
    createServer: () => {
      const s = new McpServer(
        { name: 'shared-tools-node', version: '1' },
        { jsonSchemaValidator: validator },
      );
      if (plain)
        s.registerTool('echo', { inputSchema: ECHO_INPUT }, ({ text }) => ({
          content: [{ type: 'text', text }],
        }));
      else registerSharedTools(s, [echo]);
      return s;
    },
    port: 0,
    host: '127.0.0.1',
    keepaliveMs: 0,
    mode,
  });
  process.stdout.write(`shared-tools-node ${served.url}\n`);
}
