/**
 * Honours `logging/setLevel` for log notifications sent with
 * `extra.sendNotification`. The SDK's own filter only applies to
 * `server.sendLoggingMessage`, which is not tied to a request and so would
 * leave the request's stream for the GET stream; request-related logs need
 * this gate instead. One McpServer serves one session, so one level suffices.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type LoggingLevel, SetLevelRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { LOG_LEVELS } from '../modern/constants.js';

// RFC 5424 severities in increasing order, as MCP's logging utility defines them (one list, src/modern).
const SEVERITY = LOG_LEVELS as readonly LoggingLevel[];

/** Installs the setLevel handler and returns "should a message at `level` be sent?". */
export function trackLogLevel(server: McpServer): (level: LoggingLevel) => boolean {
  let minimum: LoggingLevel | undefined;
  server.server.setRequestHandler(SetLevelRequestSchema, (request) => {
    minimum = request.params.level;
    return {};
  });
  // Until a client picks a level, send everything (the SDK's default as well).
  return (level) => minimum === undefined || SEVERITY.indexOf(level) >= SEVERITY.indexOf(minimum);
}
