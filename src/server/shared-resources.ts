/**
 * Resources and resource templates defined once and registered into every session's `McpServer`,
 * as `sharedTool` does for tools (shared-tools.ts). The SDK's `registerResource` makes a record
 * per server with four closures over that server; a shared resource's record is made once, on a
 * throwaway SDK `McpServer` of the same copy (shared-record.ts; a subclass gets the SDK's call per
 * server), and every server's table holds that frozen copy. Its `enable`/`disable`/`update`/`remove` throw `SharedRecordError`: register a
 * resource that must change per server with `registerResource`.
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
import { CHANGERS, SharedRecords } from './shared-record.js';

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

/** What registerSharedResources uses of an SDK v1 McpServer beyond its public API. */
interface ResourceTable {
  _registeredResources: Record<string, unknown>;
  _registeredResourceTemplates: Record<string, unknown>;
  setResourceRequestHandlers(): void;
  setCompletionRequestHandler(): void;
  sendResourceListChanged(): void;
}

function tableOf(server: McpServer): ResourceTable | undefined {
  const t = server as unknown as Partial<ResourceTable>;
  return typeof t._registeredResources === 'object' &&
    t._registeredResources !== null &&
    typeof t._registeredResourceTemplates === 'object' &&
    t._registeredResourceTemplates !== null &&
    typeof t.setResourceRequestHandlers === 'function' &&
    typeof t.setCompletionRequestHandler === 'function' &&
    typeof t.sendResourceListChanged === 'function'
    ? (t as ResourceTable)
    : undefined;
}

function register(server: McpServer, r: SharedResource): unknown {
  return 'uri' in r
    ? server.registerResource(r.name, r.uri, r.config, r.read)
    : server.registerResource(r.name, r.template, r.config, r.read);
}

/** Registers shared resources and templates into one session's server (call it in `createServer`). */
export function registerSharedResources(server: McpServer, items: readonly SharedResource[]): void {
  const table = tableOf(server);
  const proto = Object.getPrototypeOf(server) as object | null;
  let installed = false;
  let completion = false;
  for (const r of items) {
    const kind = 'uri' in r ? resources : templates;
    const learnt =
      table === undefined || proto === null
        ? null
        : kind.learn(proto, r, (probe) => register(probe as McpServer, r));
    if (table === undefined || learnt === null) {
      register(server, r);
      continue;
    }
    // As registerResource: a URI (a template's name) is registered once per server.
    const [slots, key, what] =
      'uri' in r
        ? [table._registeredResources, r.uri, 'Resource']
        : [table._registeredResourceTemplates, r.name, 'Resource template'];
    if (slots[key] !== undefined) throw new Error(`${what} ${key} is already registered`);
    slots[key] = learnt.record;
    completion ||= learnt.completion;
    installed = true;
  }
  if (table !== undefined && installed) {
    table.setResourceRequestHandlers();
    if (completion) table.setCompletionRequestHandler();
    table.sendResourceListChanged();
  }
}
