import { InvalidOptionError } from './errors.js';
import { IDEMPOTENCY_KEY_META } from './options.js';

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
