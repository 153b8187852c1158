/**
 * Status codes the spec gives meaning to, checked through the path (2025-11-25 basic/transports):
 * an unknown session id must get 404 (that is what makes clients start a new session), an
 * unsupported method 405. A proxy that rewrites either breaks recovery.
 */
import { randomUUID } from 'node:crypto';
import { METHOD_FIX, NOT_FOUND_FIX } from './fixes.js';
import { errorText } from './http.js';
import type { McpSession } from './session.js';
import type { Verdict } from './types.js';

function isJsonRpc(text: string): boolean {
  try {
    const j = JSON.parse(text) as { jsonrpc?: unknown };
    return j.jsonrpc === '2.0';
  } catch {
    return false;
  }
}

/** POST with a session id the server never issued. */
export async function checkUnknownSession(s: McpSession, id = `doctor-${randomUUID()}`): Promise<Verdict> {
  if (s.sessionId === undefined) {
    return { id: 'unknown-session', status: 'skip', reason: 'stateless server: no session ids to get wrong' };
  }
  try {
    const x = await s.send(
      'POST',
      s.headers({ 'mcp-session-id': id }),
      JSON.stringify({ jsonrpc: '2.0', id: s.nextId(), method: 'ping' }),
    );
    await x.done;
    const details = { status: x.status, body: x.text.slice(0, 200) };
    if (x.status === 404) {
      return isJsonRpc(x.text)
        ? {
            id: 'unknown-session',
            status: 'ok',
            reason: 'unknown session id → 404 with a JSON-RPC error',
            details,
          }
        : {
            id: 'unknown-session',
            status: 'warn',
            reason:
              'unknown session id → 404, but not a JSON-RPC body: the 404 may come from a proxy route, not the server',
            details,
          };
    }
    return {
      id: 'unknown-session',
      status: 'fail',
      reason: `unknown session id → ${x.status}, not 404: clients will not re-initialize after a restart or expiry`,
      details,
      fix: NOT_FOUND_FIX,
    };
  } catch (e) {
    return { id: 'unknown-session', status: 'fail', reason: errorText(e) };
  }
}

/** PUT is not a Streamable HTTP method: 405. */
export async function checkMethodNotAllowed(s: McpSession): Promise<Verdict> {
  try {
    const x = await s.send('PUT', s.headers(), '{}');
    await x.done;
    const allow = x.headers.get('allow');
    const details = { status: x.status, allow };
    if (x.status === 405) {
      return {
        id: 'method-not-allowed',
        status: 'ok',
        reason: `PUT → 405${allow === null ? ' (no Allow header)' : ` (Allow: ${allow})`}`,
        details,
      };
    }
    return {
      id: 'method-not-allowed',
      status: x.status >= 200 && x.status < 300 ? 'fail' : 'warn',
      reason: `PUT → ${x.status}, expected 405 Method Not Allowed`,
      details,
      fix: METHOD_FIX,
    };
  } catch (e) {
    return { id: 'method-not-allowed', status: 'fail', reason: errorText(e) };
  }
}

/** DELETE ends the session: 2xx (or 405 when the server keeps termination to itself); then 404. */
export async function checkDelete(s: McpSession): Promise<Verdict> {
  if (s.sessionId === undefined)
    return { id: 'delete', status: 'skip', reason: 'stateless server: no session to end' };
  try {
    const x = await s.delete();
    if (x.status === 405) {
      return {
        id: 'delete',
        status: 'ok',
        reason: 'DELETE → 405: the server ends sessions itself',
        details: { status: 405 },
      };
    }
    if (x.status < 200 || x.status >= 300) {
      return {
        id: 'delete',
        status: 'warn',
        reason: `DELETE → ${x.status}, expected 2xx (or 405)`,
        details: { status: x.status, body: x.text.slice(0, 200) },
      };
    }
    const after = await checkUnknownSession(s, s.sessionId);
    const details = { status: x.status, afterDelete: after.details?.['status'] ?? null };
    if (after.status === 'fail') {
      return {
        id: 'delete',
        status: 'warn',
        reason: `DELETE → ${x.status}, but the ended session then got ${details.afterDelete}, not 404`,
        details,
        fix: NOT_FOUND_FIX,
      };
    }
    return {
      id: 'delete',
      status: 'ok',
      reason: `DELETE → ${x.status}; the ended session then gets 404`,
      details,
    };
  } catch (e) {
    return { id: 'delete', status: 'fail', reason: errorText(e) };
  }
}
