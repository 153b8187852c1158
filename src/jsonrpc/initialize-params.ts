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

/** What is wrong with `params` as initialize params, or undefined when the required members are there. */
export function initializeParamsProblem(params: unknown): string | undefined {
  if (!isPlainObject(params)) return 'initialize params must be an object';
  if (typeof params['protocolVersion'] !== 'string') return 'params.protocolVersion must be a string';
  if (!isPlainObject(params['capabilities'])) return 'params.capabilities must be an object';
  const info = params['clientInfo'];
  if (!isPlainObject(info)) return 'params.clientInfo must be an object';
  if (typeof info['name'] !== 'string') return 'params.clientInfo.name must be a string';
  if (typeof info['version'] !== 'string') return 'params.clientInfo.version must be a string';
  return undefined;
}
