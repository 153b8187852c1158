/**
 * The resources the conformance suite reads and subscribes to. McpServer has no
 * API for resources/subscribe, so those two handlers go on the low-level Server;
 * the `resources.subscribe` capability they need is declared in demo-server.ts.
 */
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { registerSharedResources, type SharedResource, sharedResource } from '../server/shared-resources.js';
import { PNG_BASE64 } from './media.js';

const STATIC_TEXT = 'test://static-text';
const STATIC_BINARY = 'test://static-binary';
const WATCHED = 'test://watched-resource';
const TEMPLATE = /^test:\/\/template\/[^/]+\/data$/;
// MCP's "resource not found" code (spec: server/resources, error handling).
const RESOURCE_NOT_FOUND = -32002;

function isKnownResource(uri: string): boolean {
  return uri === STATIC_TEXT || uri === STATIC_BINARY || uri === WATCHED || TEMPLATE.test(uri);
}

// Built once for every session's server (server/shared-record.ts): one record each, no closures over a server.
const CONFORMANCE_RESOURCES: readonly SharedResource[] = [
  sharedResource(
    'static-text',
    STATIC_TEXT,
    { description: 'A static text resource', mimeType: 'text/plain' },
    (uri) => ({
      contents: [
        { uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
      ],
    }),
  ),
  sharedResource(
    'static-binary',
    STATIC_BINARY,
    { description: 'A static binary resource (PNG)', mimeType: 'image/png' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG_BASE64 }] }),
  ),
  sharedResource(
    'template-data',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'JSON data for any id', mimeType: 'application/json' },
    (uri, { id }) => {
      const value = Array.isArray(id) ? id.join(',') : (id ?? '');
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: 'application/json',
            text: JSON.stringify({ id: value, templateTest: true, data: `Data for ID: ${value}` }),
          },
        ],
      };
    },
  ),
  sharedResource(
    'watched-resource',
    WATCHED,
    { description: 'A resource clients can subscribe to', mimeType: 'text/plain' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content' }] }),
  ),
];

export function registerConformanceResources(server: McpServer): void {
  registerSharedResources(server, CONFORMANCE_RESOURCES);

  // This demo never mutates its resources, so a subscription needs no
  // bookkeeping; still refuse URIs we do not serve rather than ack nonsense.
  const checkUri = (uri: string): Record<string, never> => {
    if (!isKnownResource(uri)) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
    return {};
  };
  server.server.setRequestHandler(SubscribeRequestSchema, (request) => checkUri(request.params.uri));
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => checkUri(request.params.uri));
}
