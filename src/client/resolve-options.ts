// The client transport's options resolved: defaults merged per field, every value validated once (the
// constructor's `InvalidOptionError` names the field and the fix). The options themselves, with their
// documented defaults, are options.ts.
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { TokenAuthProvider } from './auth/token-provider.js';
import { InvalidOptionError } from './errors.js';
import type { ClientClock, FetchLike } from './http-client.js';
import { checkDefaultHttp } from './http-default.js';
import { DEFAULT_IDEMPOTENT_METHODS, hasIdempotencyKey } from './idempotency.js';
import type { HeadersOption, OutgoingRequest, StreamableHttpClientOptions, TokenOption } from './options.js';
import { REDIRECT_POLICIES, type RedirectPolicy } from './redirect.js';
import { type ClientTracing, clientTracingOf } from './tracing.js';

/** Resolved options: every field present, validated once. */
export interface ResolvedClientOptions {
  /** The caller's `fetch`; undefined means the runtime's default adapter (`http-default.ts`). */
  readonly fetch: FetchLike | undefined;
  readonly headers: HeadersOption;
  readonly token: TokenOption | undefined;
  readonly authProvider: OAuthClientProvider | TokenAuthProvider | undefined;
  readonly waitForAuthorizationResponse: (() => Promise<URL | string>) | undefined;
  readonly maxStepUps: number;
  readonly dpop: boolean;
  readonly insecureOAuthUrls: boolean;
  readonly redirectPolicy: RedirectPolicy;
  readonly sessionId: string | undefined;
  readonly maxEventBytes: number;
  readonly idleTimeoutMs: number;
  readonly initialReconnectDelayMs: number;
  readonly maxReconnectDelayMs: number;
  readonly maxReconnectAttempts: number;
  readonly stableConnectionMs: number;
  readonly closeTimeoutMs: number;
  readonly maxRetryAfterMs: number;
  readonly reinitializeOnSessionExpiry: boolean;
  readonly openStandaloneStream: boolean;
  readonly standaloneReadyWaitMs: number;
  readonly isIdempotent: (request: OutgoingRequest) => boolean;
  readonly protocol: object | undefined;
  readonly tracing: ClientTracing | undefined;
  readonly clock: ClientClock;
  readonly random: () => number;
}

const DEFAULTS = {
  maxEventBytes: 16 * 1024 * 1024,
  idleTimeoutMs: 60_000,
  initialReconnectDelayMs: 1_000,
  maxReconnectDelayMs: 30_000,
  maxReconnectAttempts: 5,
  stableConnectionMs: 30_000,
  closeTimeoutMs: 5_000,
  maxRetryAfterMs: 10_000,
  maxStepUps: 2,
  standaloneReadyWaitMs: 500,
} as const;

const systemClock: ClientClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

function number(
  options: StreamableHttpClientOptions,
  name: keyof typeof DEFAULTS,
  min: number,
  integer: boolean,
): number {
  const value = options[name] ?? DEFAULTS[name];
  if (
    typeof value !== 'number' ||
    Number.isNaN(value) ||
    value < min ||
    (integer && !Number.isInteger(value))
  ) {
    throw new InvalidOptionError(
      `option ${name} must be ${integer ? 'an integer' : 'a number'} >= ${min}, got ${String(value)}`,
    );
  }
  return value;
}

/** Merges defaults per field and validates; throws `InvalidOptionError` naming the field and the fix. */
export function resolveOptions(options: StreamableHttpClientOptions = {}): ResolvedClientOptions {
  const fetchFn = options.fetch;
  if (fetchFn === undefined) checkDefaultHttp();
  else if (typeof fetchFn !== 'function') throw new InvalidOptionError('option fetch must be a function');
  const maxEventBytes = number(options, 'maxEventBytes', 1024, true);
  const idleTimeoutMs = number(options, 'idleTimeoutMs', 1, false);
  const initialReconnectDelayMs = number(options, 'initialReconnectDelayMs', 0, false);
  const maxReconnectDelayMs = number(options, 'maxReconnectDelayMs', 0, false);
  if (maxReconnectDelayMs < initialReconnectDelayMs) {
    throw new InvalidOptionError(
      `option maxReconnectDelayMs (${maxReconnectDelayMs}) must be >= initialReconnectDelayMs (${initialReconnectDelayMs})`,
    );
  }
  const maxReconnectAttempts = number(options, 'maxReconnectAttempts', 0, true);
  const stableConnectionMs = number(options, 'stableConnectionMs', 1, false);
  const closeTimeoutMs = number(options, 'closeTimeoutMs', 1, false);
  const maxRetryAfterMs = number(options, 'maxRetryAfterMs', 0, false);
  const standaloneReadyWaitMs = number(options, 'standaloneReadyWaitMs', 0, false);
  if (options.sessionId !== undefined && !/^[\x21-\x7E]+$/.test(options.sessionId)) {
    throw new InvalidOptionError('option sessionId must be non-empty visible ASCII (0x21-0x7E)');
  }
  const headers = options.headers ?? {};
  if (typeof headers !== 'function' && (typeof headers !== 'object' || headers === null)) {
    throw new InvalidOptionError('option headers must be a record of strings or a function returning one');
  }
  if (
    options.token !== undefined &&
    typeof options.token !== 'string' &&
    typeof options.token !== 'function'
  ) {
    throw new InvalidOptionError('option token must be a string or a function returning one');
  }
  const { authProvider, waitForAuthorizationResponse } = options;
  if (authProvider !== undefined) {
    if (
      authProvider === null ||
      typeof authProvider !== 'object' ||
      (typeof (authProvider as { tokens?: unknown }).tokens !== 'function' &&
        typeof (authProvider as { token?: unknown }).token !== 'function')
    ) {
      throw new InvalidOptionError(
        'option authProvider must be an OAuthClientProvider (tokens(), saveTokens(), …) or an SDK v2 AuthProvider (token())',
      );
    }
    if (options.token !== undefined) {
      throw new InvalidOptionError(
        'options token and authProvider exclude each other: the provider supplies the token',
      );
    }
  }
  if (waitForAuthorizationResponse !== undefined && typeof waitForAuthorizationResponse !== 'function') {
    throw new InvalidOptionError('option waitForAuthorizationResponse must be a function');
  }
  const maxStepUps = number(options, 'maxStepUps', 0, true);
  for (const name of ['dpop', 'insecureOAuthUrls'] as const) {
    const value = options[name];
    if (value !== undefined && typeof value !== 'boolean')
      throw new InvalidOptionError(`option ${name} must be a boolean`);
  }
  const redirectPolicy = options.redirectPolicy ?? 'same-origin';
  if (!REDIRECT_POLICIES.includes(redirectPolicy)) {
    throw new InvalidOptionError(
      `option redirectPolicy must be 'same-origin' or 'follow', got ${String(redirectPolicy)}`,
    );
  }
  const methods = new Set(options.idempotentMethods ?? DEFAULT_IDEMPOTENT_METHODS);
  const isIdempotent =
    options.isIdempotent ??
    ((request: OutgoingRequest) => methods.has(request.method) || hasIdempotencyKey(request));
  const random = options.random ?? Math.random;
  if (typeof random !== 'function') throw new InvalidOptionError('option random must be a function');
  return {
    fetch: fetchFn,
    headers,
    token: options.token,
    authProvider,
    waitForAuthorizationResponse,
    maxStepUps,
    dpop: options.dpop ?? true,
    insecureOAuthUrls: options.insecureOAuthUrls ?? false,
    redirectPolicy,
    sessionId: options.sessionId,
    maxEventBytes,
    idleTimeoutMs,
    initialReconnectDelayMs,
    maxReconnectDelayMs,
    maxReconnectAttempts,
    stableConnectionMs,
    closeTimeoutMs,
    maxRetryAfterMs,
    reinitializeOnSessionExpiry: options.reinitializeOnSessionExpiry ?? true,
    openStandaloneStream: options.openStandaloneStream ?? true,
    standaloneReadyWaitMs,
    isIdempotent,
    protocol: options.protocol,
    tracing: clientTracingOf(options.tracing, () => (options.clock ?? systemClock).now()),
    clock: options.clock ?? systemClock,
    random,
  };
}
