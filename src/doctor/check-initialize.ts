/**
 * initialize: does the endpoint answer at all, how fast the head comes back (time to first byte as
 * the client sees it), and what the session looks like. The HTTP version is reported as far as it
 * is observable: node's fetch speaks HTTP/1.1 to the first hop and does not expose more, and the
 * versions between proxies and the server are invisible from outside — the streaming checks show
 * whether they matter.
 */
import { errorText } from './http.js';
import type { McpSession } from './session.js';
import type { Verdict } from './types.js';

export async function checkInitialize(s: McpSession): Promise<Verdict> {
  let x: Awaited<ReturnType<McpSession['initialize']>>;
  try {
    x = await s.initialize();
  } catch (e) {
    return { id: 'initialize', status: 'fail', reason: `no answer: ${errorText(e)}` };
  }
  const details: Record<string, unknown> = {
    status: x.status,
    headMs: Math.round(x.headAt),
    totalMs: Math.round(x.endAt ?? x.headAt),
    contentType: x.contentType,
    sessionId: s.sessionId ?? null,
    protocolVersion: s.protocolVersion ?? null,
    httpVersion: 'HTTP/1.1 to the first hop (node fetch); hops behind it are not observable',
    server: x.headers.get('server'),
    via: x.headers.get('via'),
  };
  if (x.status !== 200 || s.protocolVersion === undefined) {
    const hint =
      x.status === 401 || x.status === 403
        ? ' (pass credentials with --header "Authorization: Bearer …")'
        : x.status === 404
          ? ' (is this the MCP endpoint path, e.g. /mcp?)'
          : '';
    return {
      id: 'initialize',
      status: 'fail',
      reason: `initialize answered ${x.status}${hint}: ${x.text.slice(0, 160).replace(/\s+/g, ' ')}`,
      details,
    };
  }
  const session = s.sessionId === undefined ? 'no session (stateless server)' : 'session id issued';
  return {
    id: 'initialize',
    status: 'ok',
    reason: `200 ${x.isSse ? 'event stream' : 'JSON'}, head after ${details['headMs']} ms, protocol ${s.protocolVersion}, ${session}`,
    details,
  };
}
