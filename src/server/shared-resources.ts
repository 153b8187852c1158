/**
 * Resources and resource templates defined once and registered into every session's `McpServer`,
 * as `sharedTool` does for tools (shared-tools.ts). The SDK's `registerResource` makes a record
 * per server with four closures over that server; a shared resource's record is made once, on a
 * throwaway SDK `McpServer` of the same copy (shared-record.ts; a subclass gets the SDK's call per
 * server), and every server's table holds that frozen copy. Its `enable`/`disable`/`update`/
 * `remove` throw `SharedRecordError`: register a resource that must change per server with
 * `registerResource`.
 *
 * ```ts
 * const readme = sharedResource('readme', 'file:///README.md', { mimeType: 'text/markdown' }, async (uri) => ({ contents: [...] }));
 * const createServer = () => { const s = new McpServer(info); registerSharedResources(s, [readme]); return s; };
 * ```
 */
import type {
  McpServer,
  ReadResourceCallback,
  ReadResourceTemplateCallback,
  ResourceMetadata,
  ResourceTemplate,
} from '@modelcontextprotocol/sdk/server/mcp.js';
import { SharedRecordError } from '../errors.js';
import { CHANGERS, installShared, type Placement, SharedRecords } from './shared-record.js';

/** A resource (a fixed URI) or a resource template, ready to be registered into any number of servers. */
export type SharedResource =
  | {
      readonly name: string;
      readonly uri: string;
      readonly config: Readonly<ResourceMetadata>;
      readonly read: ReadResourceCallback;
    }
  | {
      readonly name: string;
      readonly template: ResourceTemplate;
      readonly config: Readonly<ResourceMetadata>;
      readonly read: ReadResourceTemplateCallback;
    };

/** Defines a resource (a fixed URI) or a resource template once, with `registerResource`'s arguments. */
export function sharedResource(
  name: string,
  uri: string,
  config: ResourceMetadata,
  read: ReadResourceCallback,
): SharedResource;
export function sharedResource(
  name: string,
  template: ResourceTemplate,
  config: ResourceMetadata,
  read: ReadResourceTemplateCallback,
): SharedResource;
export function sharedResource(
  name: string,
  uriOrTemplate: string | ResourceTemplate,
  config: ResourceMetadata,
  read: ReadResourceCallback | ReadResourceTemplateCallback,
): SharedResource {
  const frozen = Object.freeze({ ...config });
  return typeof uriOrTemplate === 'string'
    ? Object.freeze({ name, uri: uriOrTemplate, config: frozen, read: read as ReadResourceCallback })
    : Object.freeze({
        name,
        template: uriOrTemplate,
        config: frozen,
        read: read as ReadResourceTemplateCallback,
      });
}

/** SDK 1.32 `_createRegisteredResource`'s and `_createRegisteredResourceTemplate`'s data fields. */
const refuse = (r: SharedResource, op: string): SharedRecordError =>
  new SharedRecordError('uri' in r ? 'resource' : 'resource template', r.name, op);
const resources = new SharedRecords<SharedResource>(
  ['name', 'title', 'metadata', 'readCallback', 'enabled'],
  CHANGERS,
  refuse,
);
const templates = new SharedRecords<SharedResource>(
  ['resourceTemplate', 'title', 'metadata', 'readCallback', 'enabled'],
  CHANGERS,
  refuse,
);

/** SDK 1.32's resource and template tables and the methods that list and announce resources. */
const PLACEMENT: Placement<SharedResource> = {
  tables: ['_registeredResources', '_registeredResourceTemplates'],
  handlers: 'setResourceRequestHandlers',
  listChanged: 'sendResourceListChanged',
  register: (server, r) =>
    'uri' in r
      ? (server as McpServer).registerResource(r.name, r.uri, r.config, r.read)
      : (server as McpServer).registerResource(r.name, r.template, r.config, r.read),
  records: (r) => ('uri' in r ? resources : templates),
  slot: (r) =>
    'uri' in r
      ? ['_registeredResources', r.uri, 'Resource']
      : ['_registeredResourceTemplates', r.name, 'Resource template'],
};

/** Registers shared resources and templates into one session's server (call it in `createServer`). */
export function registerSharedResources(server: McpServer, items: readonly SharedResource[]): void {
  installShared(server, items, PLACEMENT);
}
