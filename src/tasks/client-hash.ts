/**
 * The hashed client key every task store files a task under (its own module so the tasks service and the
 * memory stores need not load the Redis store).
 */
import { createHash } from 'node:crypto';
import { memoByHeader } from '../http/header-memo.js';

/**
 * The client key as the ZSET's hash tag: fixed length, no braces whatever the principal holds.
 * Memoized (bounded, http/header-memo.ts): a client creates many tasks, and a SHA-256 per
 * creation was 1 % of a task echo's CPU.
 */
export const clientHash: (client: string) => string = memoByHeader(
  (client) => createHash('sha256').update(client).digest('hex').slice(0, 32),
  1024,
);
