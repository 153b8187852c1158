/**
 * The checks of single server options, each run once by `resolveOptions` (options.ts) when the
 * handler is created: an impossible value throws InvalidOptionError naming the option.
 */
import { InvalidOptionError } from '../errors.js';
import { hostNameOf } from '../security/host.js';
import type { TaskHook } from './era-2026/task-hook.js';
import type { ClientLimitOptions } from './limits/client-limits.js';
import type { TracingOptions } from './observe/operations.js';

export const CLIENT_LIMIT_DEFAULTS: ClientLimitOptions = {
  maxSessions: 1000,
  initializePerSecond: 20,
  initializeBurst: 100,
  maxTracked: 10_000,
  // As maxInflightPerSession: a 2026 client gets the concurrency one 2025 session gets.
  maxConcurrentRequests: 128,
};

export function clientLimits(
  o: Partial<ClientLimitOptions> | false | undefined,
): ClientLimitOptions | undefined {
  if (o === false) return undefined;
  if (o !== undefined && (typeof o !== 'object' || o === null)) {
    throw new InvalidOptionError('clientLimits must be an object of limits or false');
  }
  const d = CLIENT_LIMIT_DEFAULTS;
  const perSecond = o?.initializePerSecond ?? d.initializePerSecond;
  if (typeof perSecond !== 'number' || !(perSecond > 0) || !Number.isFinite(perSecond)) {
    throw new InvalidOptionError(
      `clientLimits.initializePerSecond must be a positive number, got ${String(perSecond)}`,
    );
  }
  return {
    maxSessions: positiveInt('clientLimits.maxSessions', o?.maxSessions ?? d.maxSessions),
    initializePerSecond: perSecond,
    initializeBurst: positiveInt('clientLimits.initializeBurst', o?.initializeBurst ?? d.initializeBurst),
    maxTracked: positiveInt('clientLimits.maxTracked', o?.maxTracked ?? d.maxTracked),
    maxConcurrentRequests: positiveInt(
      'clientLimits.maxConcurrentRequests',
      o?.maxConcurrentRequests ?? d.maxConcurrentRequests,
    ),
  };
}

export function nonNegativeInt(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v < 0)
    throw new InvalidOptionError(`${name} must be a non-negative integer, got ${v}`);
  return v;
}
export function positiveInt(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v <= 0)
    throw new InvalidOptionError(`${name} must be a positive integer, got ${v}`);
  return v;
}

/** The `hibernateAfterMs` option, checked once: sessions of one request have nothing to hibernate. */
export function hibernateAfterMsOf(ms: number | undefined, stateless: boolean): number | undefined {
  if (ms === undefined) return undefined;
  if (stateless) throw new InvalidOptionError('hibernateAfterMs is for sessions; stateless mode has none');
  return nonNegativeInt('hibernateAfterMs', ms);
}

/** The `sessionIdPrefix` option, checked once (see its documentation above). */
export function sessionIdPrefixOf(p: unknown): string | undefined {
  if (p === undefined) return undefined;
  if (typeof p !== 'string' || !/^[A-Za-z0-9_-]{1,32}$/.test(p)) {
    throw new InvalidOptionError('sessionIdPrefix must be 1-32 characters of A-Z a-z 0-9 _ -');
  }
  return p;
}

/** The `tasks` option, checked once: the hook `createTasks()` returns. */
export function tasksOf(t: TaskHook | undefined): TaskHook | undefined {
  if (t === undefined) return undefined;
  if (typeof t?.wants !== 'function' || typeof t.offer !== 'function') {
    throw new InvalidOptionError('tasks must be what createTasks() returns (wants() and offer())');
  }
  return t;
}

/** The `tracing` option, checked once: an object with the API module's parts Sluice calls. */
export function tracingOf(t: TracingOptions | false | undefined): TracingOptions | undefined {
  if (t === undefined || t === false) return undefined;
  const api = (t as { api?: unknown } | null)?.api as Record<string, Record<string, unknown>> | undefined;
  if (
    typeof api?.['trace']?.['getTracer'] !== 'function' ||
    typeof api['context']?.['with'] !== 'function' ||
    typeof api['propagation']?.['createBaggage'] !== 'function' ||
    typeof api['ProxyTracerProvider'] !== 'function'
  ) {
    throw new InvalidOptionError(
      "tracing must be false or { api, tracer? } with api = import * as api from '@opentelemetry/api' (1.x)",
    );
  }
  if (t.tracer !== undefined && typeof t.tracer?.startSpan !== 'function')
    throw new InvalidOptionError('tracing.tracer must be an OpenTelemetry Tracer (with startSpan)');
  return t;
}

/**
 * allowedHosts, lower-cased. The Host check compares a Host's name without its port, an IPv6
 * literal in brackets (security/host.ts; RFC 9110 §7.2), so an entry that is not such a name (a
 * port, a scheme, a bare IPv6 address) could never match: it would refuse every request quietly.
 */
export function allowedHostsOf(hosts: readonly string[]): string[] {
  return hosts.map((h) => {
    const name = typeof h === 'string' ? h.trim().toLowerCase() : '';
    if (name === '' || hostNameOf(name) !== name) {
      throw new InvalidOptionError(
        `allowedHosts: '${String(h)}' is not a host name without port or scheme (e.g. 'mcp.example.com', '[::1]')`,
      );
    }
    return name;
  });
}
