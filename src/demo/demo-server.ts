/**
 * The MCP server behind `sluice serve`: Sluice's demo tools plus every fixture
 * the official conformance server suite exercises (0.1.16, and 0.2.0-alpha.12 for 2026-07-28).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { sharedJsonSchemaValidator } from '../server/shared-validator.js';
import { registerConformancePrompts } from './conformance-prompts.js';
import { registerConformanceResources } from './conformance-resources.js';
import { registerConformanceTools } from './conformance-tools.js';
import { registerDemoTools } from './demo-tools.js';
import { registerElicitationFixtures } from './elicitation-fixtures.js';
import { registerModernFixtures } from './modern-fixtures.js';
import { registerTaskFixtures } from './task-fixtures.js';

export const DEMO_SERVER_NAME = 'sluice-demo';
export const DEMO_SERVER_VERSION = '0.1.0';

/** One JSON-schema validator for every session (README "Memory per session"). */
const validator = sharedJsonSchemaValidator();

/** A fresh server per call: an McpServer connects to exactly one transport (one session). */
export function createDemoServer(): McpServer {
  const server = new McpServer(
    { name: DEMO_SERVER_NAME, version: DEMO_SERVER_VERSION },
    {
      // Declared up front: resources.subscribe, logging and completions are not
      // added by McpServer's own register* calls, and the low-level handlers
      // below refuse to install without them.
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
      jsonSchemaValidator: validator,
    },
  );
  registerDemoTools(server);
  registerConformanceTools(server);
  registerElicitationFixtures(server);
  registerConformanceResources(server);
  registerConformancePrompts(server);
  registerModernFixtures(server);
  registerTaskFixtures(server);
  return server;
}
