/**
 * A structured logger writing one JSON object per line. Sluice never passes secrets to it (no
 * tokens, no Authorization values) and names sessions only by a short hash.
 */
import type { Logger } from '../core/options.js';

export function jsonLogger(out: { write(s: string): unknown } = process.stderr): Logger {
  const line = (level: string, event: string, fields?: Record<string, unknown>): void => {
    out.write(`${JSON.stringify({ ts: new Date().toISOString(), level, event, ...fields })}\n`);
  };
  return {
    info: (event, fields) => line('info', event, fields),
    warn: (event, fields) => line('warn', event, fields),
    error: (event, fields) => line('error', event, fields),
  };
}
