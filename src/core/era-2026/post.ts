/**
 * The modern era's entry from `handlePost`: refusals decided by era routing, notifications (202),
 * then the validation order (validate.ts), then the per-client concurrency limit, then one
 * ModernCall per request.
 */

import type { EraVerdict } from '../../modern/classify.js';
import { type ModernRefusal, ModernRefusals, refusalBody, refusalHeaders } from '../../modern/refusal.js';
import { isRefusal, validateModern } from '../../modern/validate.js';
import { ClientLimits } from '../limits/client-limits.js';
import { Refusals, sendRefusal } from '../pipeline/refusal.js';
import { type PostInput, policyFor } from '../pipeline/route.js';
import { ModernCall } from './call.js';
import type { ModernEra } from './era.js';
import { openOfferStream } from './offer-stream.js';
import type { TaskOffer } from './task-hook.js';

export function sendModernRefusal(era: ModernEra, input: PostInput, r: ModernRefusal): void {
  era.state.counts.add('refusals');
  input.sink.respond(r.status, refusalHeaders(r, input.headers), refusalBody(r));
}

export async function handleModernPost(
  era: ModernEra,
  input: PostInput,
  verdict: Exclude<EraVerdict, { era: 'legacy' }>,
): Promise<void> {
  if (verdict.era === 'refused') {
    const onSession = input.head.header('mcp-session-id') !== undefined;
    return sendModernRefusal(
      era,
      input,
      onSession ? ModernRefusals.onSession(verdict.refusal) : verdict.refusal,
    );
  }
  if (verdict.era === 'modern-notification') {
    // The revision defines no client notifications over HTTP; an accepted one is 202, no body.
    era.state.counts.add('notifications');
    input.sink.respond(202, input.headers, '');
    return;
  }
  const req = verdict.request;
  const meta = validateModern(req, (n) => input.head.header(n));
  if (isRefusal(meta)) return sendModernRefusal(era, input, meta);
  const denial = input.auth?.authorize?.(req.method, req.params);
  if (denial !== undefined) {
    // The credential does not cover this request (e.g. 403 insufficient_scope for a tool).
    era.core.counters.authRefused(denial.reason);
    return sendRefusal(input.sink, Refusals.denied(denial), input.headers, req.id);
  }
  if (era.core.closing) return sendRefusal(input.sink, Refusals.shuttingDown(1), input.headers, req.id);
  // The tasks extension (options.tasks, src/tasks/) may take the request; the tool of a task runs
  // through `serve` below, detached from this response and outside the per-client concurrency
  // limit (the hook bounds live tasks per client itself).
  const tasks = era.core.options.tasks;
  if (tasks?.wants(req.method) === true) {
    const offer: TaskOffer = {
      req,
      meta,
      principal: input.auth?.principal,
      clientKey: ClientLimits.key(input.auth?.principal, input.remote),
      head: input.head,
      rawHeaders: input.rawHeaders,
      sink: input.sink,
      headers: input.headers,
      openStream: () => openOfferStream(input.sink, era.core.connections, input.headers),
      keepsAlive: era.core.options.keepaliveMs > 0,
      serve: (r, sink, head = input.head) =>
        new ModernCall(era, { ...input, head, sink, guard: undefined }, r, meta, 'auto', undefined).run(),
    };
    if (await tasks.offer(offer)) return;
  }
  // Per-client concurrency (the era has no sessions to bound it): a valid request is refused only
  // for being over the limit, before any server is built. The slot is the call's until its cleanup.
  const limit = era.limit;
  let release: (() => void) | undefined;
  if (limit !== undefined) {
    release = limit.acquire(ClientLimits.key(input.auth?.principal, input.remote));
    if (release === undefined) {
      return sendModernRefusal(era, input, ModernRefusals.tooManyRequests(req.id, limit.max));
    }
  }
  try {
    await new ModernCall(
      era,
      input,
      req,
      meta,
      policyFor(era.core.options.mode, input.accept),
      release,
    ).run();
  } catch (error) {
    // run() threw (createServer or connect): the 500 that follows closes the sink, whose close
    // handler cleans the call up; this covers a throw before that handler is registered. A second
    // release does nothing.
    release?.();
    throw error;
  }
}
