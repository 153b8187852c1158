/**
 * Module hooks (node:module `register`) that append the URL of every module a process loads to the
 * file named by SLUICE_TEST_MODULE_LOG, one per line: how a test sees what a command loads.
 */
import { appendFileSync } from 'node:fs';

type Next = (url: string, context: unknown) => Promise<unknown>;

export async function load(url: string, context: unknown, next: Next): Promise<unknown> {
  const file = process.env['SLUICE_TEST_MODULE_LOG'];
  if (file !== undefined) appendFileSync(file, `${url}\n`);
  return next(url, context);
}
