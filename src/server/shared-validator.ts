/**
 * One JSON-schema validator for every session. Each SDK Server otherwise builds its own Ajv
 * instance (~20 KiB of heap per session: half of an idle session's cost). A single Ajv cannot simply
 * be shared for the process lifetime, though: Ajv keeps every schema object it ever compiled in a
 * Map keyed by object identity, and elicitation schemas are usually built per call, so that cache
 * would grow without bound. Here compiled validators live in a bounded LRU keyed by the schema's
 * JSON text, and the Ajv instance behind them is replaced after a fixed number of compilations.
 */

import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js';
import { InvalidOptionError } from '../errors.js';
import { BoundedMap } from '../flow/bounded-map.js';

/**
 * @param maxSchemas compiled schemas kept for reuse. @defaultValue 256
 * @example new McpServer(info, { jsonSchemaValidator: sharedJsonSchemaValidator() })
 */
export function sharedJsonSchemaValidator(maxSchemas = 256): jsonSchemaValidator {
  if (!Number.isSafeInteger(maxSchemas) || maxSchemas < 1)
    throw new InvalidOptionError('maxSchemas must be a positive integer');
  let ajv = new AjvJsonSchemaValidator();
  let compiled = 0;
  // Recency order (a hit is renewed); a BoundedMap evicts its oldest without walking a Map's holes.
  const lru = new BoundedMap<string, JsonSchemaValidator<unknown>>(maxSchemas);
  return {
    getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
      const key = JSON.stringify(schema);
      const hit = lru.touch(key);
      if (hit !== undefined) {
        return hit as JsonSchemaValidator<T>;
      }
      // A fresh Ajv drops the old one's identity cache; validators already handed out keep working.
      if (++compiled > maxSchemas * 4) {
        ajv = new AjvJsonSchemaValidator();
        compiled = 1;
      }
      const v = ajv.getValidator<unknown>(schema);
      lru.set(key, v);
      return v as JsonSchemaValidator<T>;
    },
  };
}
