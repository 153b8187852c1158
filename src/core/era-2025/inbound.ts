/**
 * What the client sends, handed to a session's SDK server: requests (a cancel that came first keeps
 * one from running; the input_required shim remembers those it may have to re-send), notifications
 * (a cancel ends its request's exchange: the SDK sends no response), and replies to the server's own
 * requests. The inbound half of a session: routing.ts is the outbound half, session.ts the
 * lifecycle; `Session` extends this class, so the tables stay on one object (README "Memory per
 * session").
 */
import type { MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { ExpiringSet } from '../../flow/expiring-set.js';
import type {
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  RequestId,
} from '../../jsonrpc/message.js';
import { INPUT_REQUIRED_METHODS } from '../../modern/mrtr.js';
import type { McpServerLike } from '../sdk/server-like.js';
import { earlyCancels } from './early-cancel.js';
import { LegacyMrtrShim, SHIM_SCHEMAS, type ShimHost } from './mrtr-shim.js';
import { type RoutingDeps, SessionRouting } from './routing.js';
import type { Hibernation } from './wake.js';

export abstract class SessionInbound<D extends RoutingDeps> extends SessionRouting<D> {
  /** The SDK server, while one is connected (not before connect, while hibernated, after the end). */
  protected server: McpServerLike | undefined;
  /** What a wake replays, and whether the server is dropped (wake.ts); only when hibernation is on. */
  protected sleep: Hibernation | undefined;
  /** Cancels that arrived before their request (early-cancel.ts); made on first use. */
  #earlyCancels: ExpiringSet<RequestId> | undefined;

  dispatchRequest(m: JsonRpcRequest, extra: MessageExtraInfo): void {
    if (this.#earlyCancels?.take(m.id, this.deps.options.now()) === true) {
      // Its cancel came first: never dispatched, answered as a cancelled request is (no response).
      const ex = this.inflightById?.get(m.id);
      this.inflightById?.delete(m.id);
      ex?.cancelled(m.id);
      return;
    }
    this.sleep?.saw(m);
    if (this.id !== undefined && INPUT_REQUIRED_METHODS.has(m.method)) {
      this.shim ??= new LegacyMrtrShim(this.#shimHost());
      this.shim.remember(m, extra);
    }
    this.dispatcher?.request(m, extra);
  }

  dispatchNotification(m: JsonRpcNotification): void {
    this.sleep?.sawNotification(m.method);
    this.dispatcher?.notification(m, 'protocol');
    if (m.method === 'notifications/cancelled') {
      // The SDK aborts the handler and sends no response; the exchange must not wait for one.
      const id = m.params?.['requestId'];
      if (typeof id === 'string' || typeof id === 'number') {
        this.shim?.forget(id);
        const ex = this.inflightById?.get(id);
        if (ex !== undefined) {
          this.inflightById?.delete(id);
          ex.cancelled(id);
        } else {
          this.#earlyCancels ??= earlyCancels();
          this.#earlyCancels.add(id, this.deps.options.now());
        }
      }
    }
  }

  /** A reply to a server-to-client request (sampling, elicitation, roots). */
  dispatchReply(m: JsonRpcResponse, id: RequestId): void {
    this.replied(id);
    this.dispatcher?.response(m);
  }

  closeRequestStream(id: RequestId): void {
    this.inflightById?.get(id)?.closeConnection();
  }

  #shimHost(): ShimHost {
    return {
      ask: (method, params, related) => {
        const inner = ((this.server as { server?: unknown } | undefined)?.server ?? this.server) as
          | { request?: (r: unknown, schema: unknown, o: unknown) => Promise<unknown> }
          | undefined;
        if (typeof inner?.request !== 'function')
          return Promise.reject(new Error('the server cannot send requests'));
        return inner.request({ method, params }, SHIM_SCHEMAS[method], { relatedRequestId: related });
      },
      redispatch: (m, extra) => this.dispatcher?.request(m, extra as MessageExtraInfo),
      deliver: (m) => {
        void this.route(m, undefined);
      },
      pending: (id) => !this.ended && this.inflightById?.has(id) === true,
    };
  }
}
