/**
 * Prometheus text exposition (format 0.0.4) of a handler's stats, with no dependency. Every name is
 * documented in docs/operations.md. Label values are from fixed sets (method labels are bounded by
 * core/observe/metrics.ts), so the series count cannot grow with client input.
 */

import type { Metrics } from './metrics.js';
import { PrometheusWriter as Writer } from './prometheus-writer.js';
import type { EndpointStats, TaskHookStats } from './stats.js';

export function renderPrometheus(s: EndpointStats, m: Metrics | undefined): string {
  const w = new Writer();
  w.one('sluice_sessions_active', 'gauge', 'Sessions currently held.', s.sessions.active);
  w.one(
    'sluice_sessions_created_total',
    'counter',
    'Sessions created by a successful initialize.',
    s.sessions.created,
  );
  w.family('sluice_sessions_ended_total', 'counter', 'Sessions ended, by reason.');
  for (const [reason, n] of Object.entries(s.sessions.ended))
    w.sample('sluice_sessions_ended_total', n, { reason });
  const h = s.sessions.hibernation;
  w.one(
    'sluice_sessions_asleep',
    'gauge',
    'Sessions whose SDK server hibernation dropped (option hibernateAfterMs), not yet woken.',
    h.asleep,
  );
  w.family('sluice_session_wakes_total', 'counter', 'Hibernated sessions woken by a message, by outcome.');
  w.sample('sluice_session_wakes_total', h.wakes, { outcome: 'woke' });
  w.sample('sluice_session_wakes_total', h.wakeFailures, { outcome: 'failed' });
  w.one(
    'sluice_session_cap_refusals_total',
    'counter',
    'Initialize requests refused because maxSessions was reached.',
    s.sessions.capRefusals,
  );
  w.family(
    'sluice_client_limit_refusals_total',
    'counter',
    'Initialize requests refused (429) by the per-client limits: sessions held, or initialize rate.',
  );
  w.sample('sluice_client_limit_refusals_total', s.sessions.clientLimitRefusals.sessions, {
    limit: 'sessions',
  });
  w.sample('sluice_client_limit_refusals_total', s.sessions.clientLimitRefusals.rate, { limit: 'rate' });
  w.one(
    'sluice_client_limit_clients_tracked',
    'gauge',
    'Clients (principals or addresses) in the per-client limits table.',
    s.sessions.clientsTracked,
  );
  w.family('sluice_streams_open', 'gauge', 'SSE connections open, by kind (post answer or standalone get).');
  w.sample('sluice_streams_open', s.streams.open.post, { kind: 'post' });
  w.sample('sluice_streams_open', s.streams.open.get, { kind: 'get' });
  w.family(
    'sluice_stream_takeovers_total',
    'counter',
    'GETs for a stream that had a live connection: replaced it, or refused with 409 (that connection had itself taken over moments ago).',
  );
  w.sample('sluice_stream_takeovers_total', s.streams.replaced, { outcome: 'replaced' });
  w.sample('sluice_stream_takeovers_total', s.streams.conflicts, { outcome: 'refused' });
  w.family('sluice_responses_total', 'counter', 'Requests answered, by method and mode (json or sse).');
  if (m !== undefined) {
    for (const [method, mm] of m.methods) {
      w.sample('sluice_responses_total', mm.json, { method, mode: 'json' });
      w.sample('sluice_responses_total', mm.sse, { method, mode: 'sse' });
    }
    w.family(
      'sluice_request_duration_seconds',
      'histogram',
      'Time from a request arriving to its response, by method.',
    );
    for (const [method, mm] of m.methods)
      w.histogram('sluice_request_duration_seconds', mm.duration, { method });
    w.family(
      'sluice_write_stall_seconds',
      'histogram',
      "Time SSE connections waited for the socket's 'drain'.",
    );
    w.histogram('sluice_write_stall_seconds', m.writeStall);
    renderSemconv(w, m);
  } else {
    w.sample('sluice_responses_total', s.responses.json, { method: 'all', mode: 'json' });
    w.sample('sluice_responses_total', s.responses.sse, { method: 'all', mode: 'sse' });
  }
  w.one('sluice_queued_bytes', 'gauge', 'Bytes waiting in SSE queues for the socket.', s.queue.bytes);
  w.one(
    'sluice_queued_messages',
    'gauge',
    'Messages waiting in SSE queues for the socket.',
    s.queue.messages,
  );
  w.one(
    'sluice_stream_queued_bytes_max',
    'gauge',
    'Largest queue of any one SSE connection, in bytes.',
    s.queue.maxStreamBytes,
  );
  w.one(
    'sluice_write_stalls_total',
    'counter',
    "Times an SSE connection had to wait for 'drain'.",
    s.writeStall.count,
  );
  w.one('sluice_events_written_total', 'counter', 'SSE events handed to sockets.', s.eventsWritten);
  w.one(
    'sluice_coalesced_total',
    'counter',
    'Progress notifications replaced by a newer one while queued.',
    s.coalesced,
  );
  w.one(
    'sluice_partial_merged_total',
    'counter',
    'Partial-output deltas merged into a queued frame while a socket was blocked (no text lost).',
    s.partialMerged,
  );
  w.one(
    'sluice_overflow_closes_total',
    'counter',
    'SSE connections closed because a queue would overflow.',
    s.overflowCloses,
  );
  w.one('sluice_replays_served_total', 'counter', 'Resumptions with Last-Event-ID served.', s.replays.served);
  w.family('sluice_replays_declined_total', 'counter', 'Resumptions declined, by reason.');
  for (const [reason, n] of Object.entries(s.replays.declined))
    w.sample('sluice_replays_declined_total', n, { reason });
  if (s.replayBuffer !== null) {
    w.one('sluice_replay_buffer_events', 'gauge', 'Events held for replay.', s.replayBuffer.events);
    w.one('sluice_replay_buffer_bytes', 'gauge', 'Bytes held for replay.', s.replayBuffer.bytes);
    w.one(
      'sluice_replay_buffer_streams_evicted_total',
      'counter',
      'Finished streams freed before their grace ended, to keep the replay store within its budget.',
      s.replayBuffer.streamsEvicted,
    );
    w.one(
      'sluice_replay_buffer_evictions_total',
      'counter',
      'Events evicted from replay buffers by their bounds.',
      s.replayBuffer.evictions,
    );
    w.one(
      'sluice_replay_streams_sized',
      'gauge',
      'Live streams whose replay bounds their measured rate raised above the configured ones (replay.tolerableDisconnectMs).',
      s.replayBuffer.streamsSized,
    );
    w.one(
      'sluice_replay_stream_bound_bytes',
      'gauge',
      'The largest byte bound of a live stream replay buffer now.',
      s.replayBuffer.largestStreamBound,
    );
  }
  w.one(
    'sluice_keepalives_sent_total',
    'counter',
    'Keepalive comments sent on idle streams.',
    s.keepalivesSent,
  );
  w.one(
    'sluice_orphan_aborts_total',
    'counter',
    'Requests cancelled after their stream stayed disconnected for orphanTimeoutMs.',
    s.orphanAborts,
  );
  w.one(
    'sluice_undeliverable_total',
    'counter',
    'Server messages with no stream to carry them.',
    s.undeliverable,
  );
  w.family('sluice_refusals_total', 'counter', 'Requests refused by a guard, by reason.');
  for (const [reason, n] of Object.entries(s.refusals)) w.sample('sluice_refusals_total', n, { reason });
  w.family(
    'sluice_auth_refusals_total',
    'counter',
    'Requests refused by authenticate, by its stable reason (32 reasons at most, then other).',
  );
  for (const [reason, n] of Object.entries(s.authRefusals))
    w.sample('sluice_auth_refusals_total', n, { reason });
  w.one(
    'sluice_auth_stream_ends_total',
    'counter',
    'Streams ended because their credential expired or was revoked.',
    s.authStreamEnds,
  );
  const mod = s.modern;
  w.one('sluice_modern_requests_total', 'counter', '2026-07-28 (stateless) requests served.', mod.requests);
  w.one('sluice_modern_inflight', 'gauge', '2026-07-28 requests in flight.', mod.inflight);
  w.one(
    'sluice_modern_refusals_total',
    'counter',
    '2026-07-28 requests refused by validation.',
    mod.refusals,
  );
  w.one(
    'sluice_modern_cancels_total',
    'counter',
    '2026-07-28 requests cancelled because their client closed the response.',
    mod.cancels,
  );
  w.one(
    'sluice_modern_concurrency_refusals_total',
    'counter',
    '2026-07-28 requests refused (429) because their client had clientLimits.maxConcurrentRequests in flight.',
    mod.concurrencyRefusals,
  );
  w.one(
    'sluice_modern_clients_inflight',
    'gauge',
    'Clients (principals or addresses) with at least one 2026-07-28 request in flight.',
    mod.clientsInflight,
  );
  w.one('sluice_listen_streams', 'gauge', 'subscriptions/listen streams open.', mod.listenStreams);
  w.one(
    'sluice_listen_refusals_total',
    'counter',
    'subscriptions/listen refused by the stream caps.',
    mod.listenRefusals,
  );
  w.one(
    'sluice_listen_coalesced_total',
    'counter',
    'Change notifications folded into an equal pending one on a slow listen stream.',
    mod.listenCoalesced,
  );
  w.family(
    'sluice_event_store_errors_total',
    'counter',
    'Event-store calls that rejected or threw, by operation.',
  );
  for (const [op, n] of Object.entries(s.eventStore.errors))
    w.sample('sluice_event_store_errors_total', n, { op });
  w.one(
    'sluice_event_store_gaps_total',
    'counter',
    'Resumes declined because the event store had lost events after the cursor.',
    s.eventStore.gaps,
  );
  if (s.tasks !== null) renderTasks(w, s.tasks);
  return w.out;
}

/** The task service's counters (option `tasks`, docs/tasks.md). */
function renderTasks(w: Writer, t: TaskHookStats): void {
  w.one(
    'sluice_tasks_created_total',
    'counter',
    'Tasks stored, each answered with a CreateTaskResult.',
    t.created,
  );
  w.one('sluice_tasks_running', 'gauge', 'Task rounds running on this instance.', t.running);
  w.one(
    'sluice_task_limit_refusals_total',
    'counter',
    'Task creations refused with 429: the client had maxLivePerClient unfinished tasks.',
    t.refusedLimit,
  );
  w.family(
    'sluice_task_calls_plain_total',
    'counter',
    'Calls of optional task tools answered as plain calls, by why: ended within taskAfterMs, or the store refused their task.',
  );
  w.sample('sluice_task_calls_plain_total', t.answeredDirectly, { outcome: 'within-time' });
  w.sample('sluice_task_calls_plain_total', t.keptPlain, { outcome: 'task-refused' });
}

/** Requests the node binding received, by HTTP protocol (`http/1.1` or `h2`). */
export function renderProtocols(counts: Record<string, number>): string {
  const w = new Writer();
  w.family('sluice_http_requests_total', 'counter', 'Requests received, by HTTP protocol (http/1.1 or h2).');
  for (const [protocol, n] of Object.entries(counts)) w.sample('sluice_http_requests_total', n, { protocol });
  return w.out;
}

/** The semantic conventions' names and labels (OpenTelemetry → Prometheus: dots become underscores). */
function renderSemconv(w: Writer, m: Metrics): void {
  w.family(
    'mcp_server_operation_duration_seconds',
    'histogram',
    'MCP request duration (OpenTelemetry MCP semantic conventions, mcp.server.operation.duration).',
  );
  for (const { key, h } of m.semconv.operations.values()) {
    const labels: Record<string, string> = { mcp_method_name: key.method };
    if (key.tool !== '') labels['gen_ai_tool_name'] = key.tool;
    if (key.error !== '') labels['error_type'] = key.error;
    if (key.version !== '') labels['mcp_protocol_version'] = key.version;
    w.histogram('mcp_server_operation_duration_seconds', h, labels);
  }
  w.family(
    'mcp_server_session_duration_seconds',
    'histogram',
    'MCP session duration (OpenTelemetry MCP semantic conventions, mcp.server.session.duration).',
  );
  for (const [version, h] of m.semconv.sessions)
    w.histogram(
      'mcp_server_session_duration_seconds',
      h,
      version === '' ? {} : { mcp_protocol_version: version },
    );
}
