import { IDEMPOTENCY_KEY_META } from '../jsonrpc/meta-keys.js';
import { InvalidOptionError } from './errors.js';

/**
 * `_meta` marking a request as safe to re-send when its stream is lost and cannot be resumed:
 *
 * ```ts
 * await client.callTool({ name: 'reindex', arguments: { corpus: 'a' }, _meta: idempotencyMeta('reindex-a-42') });
 * ```
 *
 * The key should identify the operation (the server may use it to deduplicate); the transport only checks
 * that it is a non-empty string.
 */
export function idempotencyMeta(key: string): { [IDEMPOTENCY_KEY_META]: string } {
  if (typeof key !== 'string' || key.length === 0)
    throw new InvalidOptionError('idempotency key must be a non-empty string');
  return { [IDEMPOTENCY_KEY_META]: key };
}

/** Methods re-sent when their answer is lost without a way to resume it (the `idempotentMethods` default). */
export const DEFAULT_IDEMPOTENT_METHODS: readonly string[] = [
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
];

/** True when `params._meta` carries a non-empty idempotency key. */
export function hasIdempotencyKey(request: {
  readonly params?: { readonly _meta?: Readonly<Record<string, unknown>> };
}): boolean {
  const key = request.params?._meta?.[IDEMPOTENCY_KEY_META];
  return typeof key === 'string' && key.length > 0;
}
