import {
  EventTooLargeError,
  ForbiddenError,
  HttpStatusError,
  IdleTimeoutError,
  MalformedMessageError,
  NetworkError,
  type SluiceClientError,
  UnauthorizedError,
} from './errors.js';
import { BodySilenceError, type HttpResponse } from './http-client.js';
import { isRedirect } from './redirect.js';
import { checkSessionIdHeader } from './session.js';

/** `Accept` of every POST: the client MUST list both (spec "Sending Messages to the Server"). */
export const POST_ACCEPT = 'application/json, text/event-stream';

/**
 * Maps a non-2xx response to the typed error (body read for diagnostics, bounded in size and in
 * silence: a body that stalls for `silenceMs` leaves the diagnostics empty, never the error unraised).
 */
export async function statusError(
  method: string,
  response: HttpResponse,
  silenceMs: number,
): Promise<HttpStatusError> {
  const body = (await response.text(4096, silenceMs).catch(() => '')) ?? '';
  const challenge = response.header('www-authenticate') ?? undefined;
  if (response.status === 401) return new UnauthorizedError(method, body, challenge);
  if (response.status === 403) return new ForbiddenError(method, body, challenge);
  return new HttpStatusError(method, response.status, body, undefined, unfollowed(response));
}

/**
 * Why a redirect answer reached the transport: the adapters follow only those redirect.ts allows. Names the target
 * without its query, fragment or userinfo.
 */
function unfollowed(response: HttpResponse): string | undefined {
  // fetch's `redirect: 'manual'` in a browser: an opaque answer whose target cannot be read.
  if (response.status === 0) return 'an opaque redirect (this runtime hides its target): not followed';
  if (!isRedirect(response.status)) return undefined;
  const location = response.header('location');
  if (location === null) return undefined;
  let target: string;
  try {
    const to = new URL(location, 'http://unknown.invalid');
    target = `${to.origin}${to.pathname}`;
  } catch {
    target = 'an invalid location';
  }
  return `redirect to ${target} not followed: a redirect must keep the method and stay within the origin, or with redirectPolicy 'follow' not go from https to http`;
}

/**
 * Why reading an answer's JSON body failed, as a typed error: no byte for `idleTimeoutMs`
 * (`IdleTimeoutError`), or the connection failed mid-body (`NetworkError`: the answer is lost, and the
 * request may have run).
 */
function bodyFailure(error: unknown, what: string): SluiceClientError {
  if (error instanceof BodySilenceError) return new IdleTimeoutError(error.silenceMs, what);
  return new NetworkError(`${what} was cut: ${describe(error)}`, error);
}

/**
 * An answer's JSON body, parsed: read up to `maxBytes` (`EventTooLargeError` beyond), each part within
 * `silenceMs` (`IdleTimeoutError`), whole (`NetworkError` when cut), and JSON (`MalformedMessageError`).
 * `what` names the body in the errors.
 */
export async function readJsonBody(
  response: HttpResponse,
  maxBytes: number,
  silenceMs: number,
  what: string,
): Promise<unknown> {
  let text: string | undefined;
  try {
    text = await response.text(maxBytes, silenceMs);
  } catch (error) {
    throw bodyFailure(error, what);
  }
  if (text === undefined) throw new EventTooLargeError(maxBytes);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new MalformedMessageError(`${what} is not valid JSON`, error);
  }
}

/** Releases a response body we do not need (a body that has fully arrived keeps its keep-alive socket). */
export async function discard(response: HttpResponse): Promise<void> {
  await response.body?.cancel();
}

/**
 * The `Mcp-Session-Id` of an initialize answer (null when absent), checked (session.ts
 * `checkSessionIdHeader`); a malformed one fails with the answer's body released.
 */
export async function answeredSessionId(response: HttpResponse): Promise<string | null> {
  const sessionId = response.header('mcp-session-id');
  try {
    checkSessionIdHeader(sessionId);
  } catch (error) {
    await discard(response);
    throw error;
  }
  return sessionId;
}

/** Any thrown value as a typed client error (typed ones pass through). */
export function toClientError(error: unknown): SluiceClientError {
  if (
    error instanceof Error &&
    'code' in error &&
    typeof error.code === 'string' &&
    error.code.startsWith('SLUICE_CLIENT_')
  ) {
    return error as SluiceClientError;
  }
  return new NetworkError(describe(error), error);
}

/** One line describing an error and its cause (undici puts the interesting part in `cause`). */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

export function lowerCaseKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(headers)) {
    const value = headers[key];
    if (value !== undefined) out[key.toLowerCase()] = value;
  }
  return out;
}

export function withToken(
  headers: Record<string, string>,
  token: string | undefined,
): Record<string, string> {
  if (token !== undefined && token.length > 0) headers['authorization'] = `Bearer ${token}`;
  return headers;
}
