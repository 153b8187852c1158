/**
 * Opt-in fast dispatch into an SDK `Protocol` (see `StreamableHttpClientOptions.protocol`).
 *
 * Why: `Protocol.connect()` installs `transport.onmessage = m => { if (isJSONRPCResultResponse(m) ||
 * isJSONRPCErrorResponse(m)) … else if (isJSONRPCRequest(m)) … }`, and each of those guards is a zod
 * `safeParse`; a *failing* one builds a ZodError (26–43 µs measured; docs/benchmarks.md "Baseline"). Every incoming
 * notification therefore pays for three failing guards before it reaches `_onnotification`. The transport has
 * already classified the message with property checks, so it can call the right `Protocol` method directly.
 *
 * The methods are private SDK API: they are feature-detected once, and each call also checks that the
 * protocol is still connected to this very transport; otherwise the caller falls back to `onmessage`.
 */

type Handler = (message: unknown, extra?: unknown) => void;

export interface FastDispatch {
  readonly target: { readonly transport?: unknown };
  readonly response: Handler;
  readonly notification: Handler;
  readonly request: Handler;
}

/** Returns the bound methods when `protocol` looks like an SDK `Protocol`, else undefined. */
export function detectFastDispatch(protocol: object | undefined): FastDispatch | undefined {
  if (protocol === undefined) return undefined;
  const p = protocol as Record<string, unknown>;
  const response = p['_onresponse'];
  const notification = p['_onnotification'];
  const request = p['_onrequest'];
  if (typeof response !== 'function' || typeof notification !== 'function' || typeof request !== 'function') {
    return undefined;
  }
  if (!('transport' in protocol)) return undefined;
  return {
    target: protocol as { readonly transport?: unknown },
    response: response.bind(protocol) as Handler,
    notification: notification.bind(protocol) as Handler,
    request: request.bind(protocol) as Handler,
  };
}
