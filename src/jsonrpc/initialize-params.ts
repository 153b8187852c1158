/**
 * The shape `initialize` params must have before a server is built for them (MCP 2025-11-25
 * basic/lifecycle §"Initialization", schema `InitializeRequestParams`: `protocolVersion` a string,
 * `capabilities` a ClientCapabilities object, `clientInfo` an Implementation with string `name` and
 * `version`). Only these required members are read; everything else is the served server's to
 * judge. Checked first because an `initialize` otherwise costs a whole SDK server, built, connected
 * and thrown away, to learn that its params were malformed (about 1 ms of CPU each, measured with
 * 10,000 of them, 2026-12-04), and the SDK's answer was a -32603 carrying a validator dump.
 */
import { isPlainObject } from './message.js';

/**
 * An MCP `Implementation` as far as its required members go (an object with a string `name` and
 * `version`): `initialize`'s `clientInfo`, and the 2026-07-28 `_meta` clientInfo (modern/validate.ts).
 */
export function isImplementation(v: unknown): v is { name: string; version: string; [k: string]: unknown } {
  return isPlainObject(v) && typeof v['name'] === 'string' && typeof v['version'] === 'string';
}

/** What is wrong with `params` as initialize params, or undefined when the required members are there. */
export function initializeParamsProblem(params: unknown): string | undefined {
  if (!isPlainObject(params)) return 'initialize params must be an object';
  if (typeof params['protocolVersion'] !== 'string') return 'params.protocolVersion must be a string';
  if (!isPlainObject(params['capabilities'])) return 'params.capabilities must be an object';
  if (!isImplementation(params['clientInfo']))
    return 'params.clientInfo must be an object with a string name and version';
  return undefined;
}
