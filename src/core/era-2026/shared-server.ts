/**
 * One served server per principal for 2026-07-28 requests, when `createServer` declares that it
 * may be shared (`statelessSafe(createServer)`): the server it builds must not depend on the
 * per-request context beyond the principal (clientCapabilities, clientInfo, protocolVersion) nor
 * keep per-client state. The modern era has no sessions (MCP 2026-07-28
 * basic/transports/streamable-http), so nothing ties a request to a server instance; building a
 * fresh `McpServer` per request (zod schemas, tool registration, connect, close) is then most of a
 * modern request's CPU.
 *
 * The SDK serves concurrent requests on one transport (a legacy session does so already). Requests
 * of different clients could share a JSON-RPC id, so each request goes to the shared server under
 * an id of Sluice's own, and what the server sends back is routed to the request that id belongs to
 * (responses by id, notifications and server-to-client requests by their related request id) and
 * handed back under the client's id. Bounded: at most MAX_SHARED servers; a principal beyond that
 * gets a fresh server per request, as without the declaration.
 */
import { JsonRpcCode } from '../../jsonrpc/codes.js';
import { errorResponse, type JsonRpcMessage, type RequestId } from '../../jsonrpc/message.js';
import { MODERN_VERSIONS } from '../../modern/constants.js';
import { changeOf } from '../change-bus.js';
import type { CoreContext } from '../context.js';
import { type BridgeTarget, BridgeTransport } from '../sdk/bridge-transport.js';
import { createDispatcher, type Dispatcher } from '../sdk/dispatcher.js';
import type { CreateServer, McpServerLike } from '../sdk/server-like.js';
import { bindModern } from './v2-binding.js';

const SHARED = Symbol.for('sluice.statelessSafe');

/** Principals (each with one shared server) kept at most per endpoint. */
export const MAX_SHARED = 256;

/**
 * Declares that the servers `createServer` builds may serve many 2026-07-28 requests of one
 * principal, concurrently: they depend on nothing in the context but `principal` and keep no
 * per-client state. Legacy sessions still get a server each.
 */
export function statelessSafe<F extends CreateServer>(createServer: F): F {
  (createServer as F & { [SHARED]?: boolean })[SHARED] = true;
  return createServer;
}

export function isStatelessSafe(createServer: CreateServer): boolean {
  return (createServer as CreateServer & { [SHARED]?: boolean })[SHARED] === true;
}

/** What a request in flight gives the shared server to route back to it. */
export interface SharedCaller {
  route(message: JsonRpcMessage, relatedRequestId: RequestId | undefined): Promise<void> | undefined;
  routeProgress(related: RequestId, json: string, key: string | undefined): Promise<void> | undefined;
}

interface Owner {
  caller: SharedCaller;
  /** The client's id, to put back on a response; undefined for Sluice's own requests. */
  clientId: RequestId | undefined;
}

let wireSeq = 0;

export class SharedServer implements BridgeTarget {
  readonly server: McpServerLike;
  readonly transport: BridgeTransport;
  readonly #core: CoreContext;
  readonly #owners = new Map<RequestId, Owner>();
  #dispatch: Dispatcher | undefined;
  #bound = false;
  /** Called once when the SDK closes the server (the pool then forgets it). */
  readonly #onClosed: () => void;

  constructor(core: CoreContext, server: McpServerLike, onClosed: () => void) {
    this.#core = core;
    this.server = server;
    this.transport = new BridgeTransport(this, undefined);
    this.#onClosed = onClosed;
  }

  /** Hands inbound messages to the SDK; undefined until the server is connected. */
  get dispatch(): Dispatcher | undefined {
    return this.#dispatch;
  }
  /** Whether it is an SDK v2 server bound to the 2026-07-28 revision (v2-binding.ts). */
  get bound(): boolean {
    return this.#bound;
  }

  /** The server is connected to its transport: messages can be dispatched. */
  connected(dispatch: Dispatcher, bound: boolean): void {
    this.#dispatch = dispatch;
    this.#bound = bound;
  }

  /** A wire id for a request of `caller`; `clientId` is put back on the response. */
  claim(caller: SharedCaller, clientId: RequestId | undefined, id?: string): string {
    const wire = id ?? `\u0000sluice-m${++wireSeq}`;
    this.#owners.set(wire, { caller, clientId });
    return wire;
  }

  release(wire: RequestId): void {
    this.#owners.delete(wire);
  }

  route(message: JsonRpcMessage, related: RequestId | undefined): Promise<void> | undefined {
    if ('method' in message) {
      const owner = related === undefined ? undefined : this.#owners.get(related);
      if (owner === undefined) {
        // Unrelated (or its request is over): a list change or resource update feeds listen streams.
        if (!('id' in message)) {
          const change = changeOf(message.method, message.params);
          if (change !== undefined) this.#core.bus.publish(change);
        } else {
          // A server-to-client request nobody can answer: fail it at once (deferred: the SDK is
          // still inside its send()).
          this.#core.counters.add('undeliverable');
          const id = message.id;
          queueMicrotask(() =>
            this.#dispatch?.response(
              errorResponse(id, JsonRpcCode.ServerError, 'no request to relate it to'),
            ),
          );
        }
        return undefined;
      }
      return owner.caller.route(message, owner.clientId ?? related);
    }
    const owner = this.#owners.get(message.id as RequestId);
    if (owner === undefined) return undefined;
    this.#owners.delete(message.id as RequestId);
    const back = owner.clientId === undefined ? message : { ...message, id: owner.clientId };
    return owner.caller.route(back as JsonRpcMessage, undefined);
  }

  /** A serialized related progress notification (BridgeTarget): to its request, as `route` does. */
  routeProgress(related: RequestId, json: string, key: string | undefined): Promise<void> | undefined {
    const owner = this.#owners.get(related);
    // Unrelated (or its request is over): progress is no list change, so nothing is published.
    if (owner === undefined) return undefined;
    return owner.caller.routeProgress(owner.clientId ?? related, json, key);
  }

  /**
   * The server was closed (by the application, or the SDK after a transport error): nothing it was
   * serving will be answered, so each request in flight gets an error now, and the pool builds a
   * fresh server for the next one instead of handing out this dead one.
   */
  closedBySdk(): void {
    this.#onClosed();
    const owners = [...this.#owners];
    this.#owners.clear();
    for (const [wire, o] of owners) {
      const back = errorResponse(o.clientId ?? wire, JsonRpcCode.InternalError, 'the server closed');
      void o.caller.route(back, undefined);
    }
  }
}

/** The shared servers of one endpoint, by principal. */
export class SharedServers {
  readonly #core: CoreContext;
  readonly #servers = new Map<string, Promise<SharedServer>>();

  constructor(core: CoreContext) {
    this.#core = core;
  }

  /** The principal's shared server, built on first use; undefined when the cap is reached. */
  get(principal: string | undefined): Promise<SharedServer> | undefined {
    const key = principal ?? '';
    const have = this.#servers.get(key);
    if (have !== undefined) return have;
    if (this.#servers.size >= MAX_SHARED) return undefined;
    const forget = (): void => {
      if (this.#servers.get(key) === built) this.#servers.delete(key);
    };
    const built: Promise<SharedServer> = this.#build(principal, forget).catch((error: unknown) => {
      forget();
      throw error;
    });
    this.#servers.set(key, built);
    return built;
  }

  async #build(principal: string | undefined, forget: () => void): Promise<SharedServer> {
    const core = this.#core;
    const server = core.createServer({ sessionId: undefined, principal, era: 'modern' });
    const shared = new SharedServer(core, server, forget);
    await server.connect(shared.transport);
    // Bound without a client identity: a shared server must not depend on one (statelessSafe).
    const bound = bindModern(server, MODERN_VERSIONS[0] ?? '');
    shared.connected(createDispatcher(server, shared.transport, core.options.fastDispatch), bound);
    return shared;
  }

  /** Closes every shared server (endpoint close). */
  async close(): Promise<void> {
    const all = [...this.#servers.values()];
    this.#servers.clear();
    for (const p of all) {
      const s = await p.catch(() => undefined);
      await s?.server.close().catch(() => undefined);
    }
  }
}
