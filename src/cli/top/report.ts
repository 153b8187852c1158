/**
 * One interval of `sluice top`: what an operator reads off one instance or a cluster, computed from
 * each instance's previous and current scrape. Gauges are summed over the instances that answered
 * (the largest single queue is a maximum); counters become per-second rates of their increase
 * (resets handled per instance, then summed); latency quantiles come from the merged histogram
 * increases, so they describe this interval only. Names are those of docs/operations.md.
 */
import type { Sample } from './exposition.js';
import {
  type Bucket,
  bucketsBy,
  histogramQuantile,
  increases,
  type Snapshot,
  sumBy,
  total,
} from './series.js';

export interface InstanceState {
  readonly url: string;
  /** The scrape before this interval's, if there was one. */
  readonly prev: Snapshot | undefined;
  /** This interval's scrape; undefined when it failed. */
  readonly cur: Snapshot | undefined;
  /** Why this interval's scrape failed. */
  readonly error?: string;
}

export interface MethodRow {
  readonly method: string;
  readonly perSecond: number;
  /** Seconds; null when the method answered nothing this interval (or metrics are off). */
  readonly p50: number | null;
  readonly p99: number | null;
}

/** One tool's `tools/call` answers this interval (the semantic-convention histogram, by tool name). */
export interface ToolRow {
  readonly tool: string;
  readonly perSecond: number;
  readonly p50: number | null;
  readonly p99: number | null;
  /** Answers with an `error_type` (tool_error, cancelled, a JSON-RPC code) per second. */
  readonly errorsPerSecond: number;
}

export interface TopReport {
  readonly time: string;
  /** Seconds between the two scrapes the rates come from (the longest, for a cluster; 0 when no instance answered). */
  readonly intervalSeconds: number;
  readonly instances: readonly { readonly url: string; readonly up: boolean; readonly error?: string }[];
  readonly sessions: number;
  /** Of them, sessions whose SDK server hibernation dropped (`hibernateAfterMs`). */
  readonly sessionsAsleep: number;
  readonly streams: { readonly post: number; readonly get: number };
  /** Requests completed per second (all methods). */
  readonly requestsPerSecond: number;
  /** Requests refused or failed this interval, per second, by reason (docs/observability.md). */
  readonly errorsPerSecond: Readonly<Record<string, number>>;
  readonly methods: readonly MethodRow[];
  /** Per tool, busiest first; empty when the server exposes no `mcp_server_operation_duration_seconds`. */
  readonly tools: readonly ToolRow[];
  readonly queue: { readonly bytes: number; readonly messages: number; readonly maxStreamBytes: number };
  readonly writeStalls: {
    readonly perSecond: number;
    /** Seconds spent stalled per second of wall time (summed over connections). */
    readonly stalledSecondsPerSecond: number;
    readonly p99: number | null;
  };
  readonly replays: {
    readonly servedPerSecond: number;
    readonly declinedPerSecond: Readonly<Record<string, number>>;
  };
  /** Null when no instance serves tasks (no sluice_tasks_running series). */
  readonly tasks: {
    /** Task rounds running now, summed over the instances. */
    readonly running: number;
    readonly createdPerSecond: number;
    /** Calls of optional task tools answered as plain calls: within taskAfterMs, or refused a task then. */
    readonly plainPerSecond: { readonly withinTime: number; readonly taskRefused: number };
  } | null;
  /** Null without a cluster (no instance exposes sluice_cluster_* metrics). */
  readonly forwarded: {
    readonly perSecond: number;
    /** Forwarded requests over requests that arrived from clients; null when none arrived. */
    readonly share: number | null;
    readonly hopP99: number | null;
  } | null;
}

/** The `reason` label each refusal or failure counter contributes to errorsPerSecond. */
const ERROR_COUNTERS: readonly { readonly name: string; readonly by?: string; readonly prefix: string }[] = [
  { name: 'sluice_refusals_total', by: 'reason', prefix: '' },
  { name: 'sluice_session_cap_refusals_total', prefix: 'session-cap' },
  { name: 'sluice_client_limit_refusals_total', by: 'limit', prefix: 'client-limit-' },
  { name: 'sluice_modern_refusals_total', prefix: 'modern-refused' },
  { name: 'sluice_overflow_closes_total', prefix: 'overflow-close' },
  { name: 'sluice_orphan_aborts_total', prefix: 'orphan-abort' },
  { name: 'sluice_cluster_forward_failures_total', prefix: 'forward-failed' },
  { name: 'sluice_cluster_forward_refusals_total', prefix: 'forward-refused' },
  { name: 'sluice_task_limit_refusals_total', prefix: 'task-limit' },
];

function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function perSecond(m: Map<string, number>, dt: number, prefix = ''): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of m) out[`${prefix}${k}`] = dt > 0 ? round(v / dt) : 0;
  return out;
}

function quantileOrNull(
  q: number,
  buckets: ReadonlyMap<string, readonly Bucket[]>,
  key: string,
): number | null {
  const b = buckets.get(key);
  if (b === undefined) return null;
  const v = histogramQuantile(q, b);
  return v === undefined ? null : round(v, 6);
}

export function buildReport(states: readonly InstanceState[], now: Date): TopReport {
  const current: Sample[] = [];
  const grown: Sample[] = [];
  let dt = 0;
  let maxStream = 0;
  let clustered = false;
  let tasked = false;
  for (const st of states) {
    if (st.cur === undefined) continue;
    for (const s of st.cur.samples()) {
      current.push(s);
      if (s.name === 'sluice_stream_queued_bytes_max') maxStream = Math.max(maxStream, s.value);
    }
    if (st.cur.has('sluice_cluster_forwarded_total')) clustered = true;
    if (st.cur.has('sluice_tasks_running')) tasked = true;
    if (st.prev !== undefined) {
      grown.push(...increases(st.prev, st.cur));
      dt = Math.max(dt, (st.cur.at - st.prev.at) / 1000);
    }
  }
  const rate = (name: string): number => (dt > 0 ? total(grown, name) / dt : 0);
  const streams = sumBy(current, 'sluice_streams_open', 'kind');
  // Requests completed in the interval (the duration histogram's count: the same population as
  // the percentiles); without per-method metrics (`metrics: false`), requests answered.
  const timed = current.some((s) => s.name === 'sluice_request_duration_seconds_count');
  const answered = timed
    ? sumBy(grown, 'sluice_request_duration_seconds_count', 'method')
    : sumBy(grown, 'sluice_responses_total', 'method');
  const durations = bucketsBy(grown, 'sluice_request_duration_seconds', 'method');
  const methods: MethodRow[] = [...answered]
    .filter(([method]) => method !== '')
    .map(([method, n]) => ({
      method,
      perSecond: dt > 0 ? round(n / dt) : 0,
      p50: quantileOrNull(0.5, durations, method),
      p99: quantileOrNull(0.99, durations, method),
    }))
    .sort((a, b) => b.perSecond - a.perSecond || a.method.localeCompare(b.method));
  const tools = toolRows(grown, dt);
  const errors: Record<string, number> = {};
  for (const c of ERROR_COUNTERS) {
    for (const [k, v] of Object.entries(perSecond(sumBy(grown, c.name, c.by), dt, c.prefix))) {
      errors[k] = (errors[k] ?? 0) + v;
    }
  }
  const stalls = bucketsBy(grown, 'sluice_write_stall_seconds');
  let forwarded: TopReport['forwarded'] = null;
  if (clustered) {
    const out = total(grown, 'sluice_cluster_forwarded_total');
    const fromClients =
      total(grown, 'sluice_http_requests_total') - total(grown, 'sluice_cluster_forwarded_in_total');
    forwarded = {
      perSecond: round(rate('sluice_cluster_forwarded_total')),
      share: fromClients > 0 ? round(Math.min(1, out / fromClients), 4) : null,
      hopP99: quantileOrNull(0.99, bucketsBy(grown, 'sluice_cluster_forward_seconds'), ''),
    };
  }
  let tasks: TopReport['tasks'] = null;
  if (tasked) {
    const plain = perSecond(sumBy(grown, 'sluice_task_calls_plain_total', 'outcome'), dt);
    tasks = {
      running: total(current, 'sluice_tasks_running'),
      createdPerSecond: round(rate('sluice_tasks_created_total')),
      plainPerSecond: { withinTime: plain['within-time'] ?? 0, taskRefused: plain['task-refused'] ?? 0 },
    };
  }
  return {
    time: now.toISOString(),
    intervalSeconds: round(dt),
    instances: states.map((s) =>
      s.cur === undefined
        ? { url: s.url, up: false, ...(s.error === undefined ? {} : { error: s.error }) }
        : { url: s.url, up: true },
    ),
    sessions: total(current, 'sluice_sessions_active'),
    sessionsAsleep: total(current, 'sluice_sessions_asleep'),
    streams: { post: streams.get('post') ?? 0, get: streams.get('get') ?? 0 },
    requestsPerSecond: dt > 0 ? round([...answered.values()].reduce((a, b) => a + b, 0) / dt) : 0,
    errorsPerSecond: errors,
    methods,
    tools,
    queue: {
      bytes: total(current, 'sluice_queued_bytes'),
      messages: total(current, 'sluice_queued_messages'),
      maxStreamBytes: maxStream,
    },
    writeStalls: {
      perSecond: round(rate('sluice_write_stalls_total')),
      stalledSecondsPerSecond: round(rate('sluice_write_stall_seconds_sum'), 4),
      p99: quantileOrNull(0.99, stalls, ''),
    },
    replays: {
      servedPerSecond: round(rate('sluice_replays_served_total')),
      declinedPerSecond: perSecond(sumBy(grown, 'sluice_replays_declined_total', 'reason'), dt),
    },
    tasks,
    forwarded,
  };
}

const SEMCONV = 'mcp_server_operation_duration_seconds';

/**
 * Per-tool rows from the OpenTelemetry MCP semantic-convention histogram: only its `tools/call`
 * series carry `gen_ai_tool_name` (bounded by the server: later names share `_other`).
 */
function toolRows(grown: readonly Sample[], dt: number): ToolRow[] {
  const calls = grown.filter(
    (s) => s.name.startsWith(SEMCONV) && s.labels['mcp_method_name'] === 'tools/call',
  );
  const counts = sumBy(calls, `${SEMCONV}_count`, 'gen_ai_tool_name');
  const errors = sumBy(
    calls.filter((s) => (s.labels['error_type'] ?? '') !== ''),
    `${SEMCONV}_count`,
    'gen_ai_tool_name',
  );
  const durations = bucketsBy(calls, SEMCONV, 'gen_ai_tool_name');
  return [...counts]
    .filter(([tool, n]) => tool !== '' && n > 0)
    .map(([tool, n]) => ({
      tool,
      perSecond: dt > 0 ? round(n / dt) : 0,
      p50: quantileOrNull(0.5, durations, tool),
      p99: quantileOrNull(0.99, durations, tool),
      errorsPerSecond: dt > 0 ? round((errors.get(tool) ?? 0) / dt) : 0,
    }))
    .sort((a, b) => b.perSecond - a.perSecond || a.tool.localeCompare(b.tool));
}
