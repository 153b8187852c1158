// `sluice top`'s arithmetic: counter increases across resets, histogram quantiles as Prometheus
// computes them (checked against the observations they came from), and one report over a cluster
// where one instance restarted between scrapes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { parseExposition } from '../../src/cli/top/exposition.js';
import { renderFrame } from '../../src/cli/top/render.js';
import { buildReport } from '../../src/cli/top/report.js';
import { metricsUrl } from '../../src/cli/top/scrape.js';
import {
  type Bucket,
  bucketsBy,
  counterIncrease,
  histogramQuantile,
  increases,
  Snapshot,
  seriesKey,
} from '../../src/cli/top/series.js';

const snap = (text: string, at: number): Snapshot => new Snapshot(parseExposition(text), at);

const BOUNDS = [0.001, 0.01, 0.1, 1, 10];

function histogramOf(observations: readonly number[]): Bucket[] {
  const out: Bucket[] = BOUNDS.map((le) => ({ le, count: observations.filter((o) => o <= le).length }));
  out.push({ le: Number.POSITIVE_INFINITY, count: observations.length });
  return out;
}

/** A histogram family in exposition text, with the cumulative counts given. */
function histText(name: string, labels: string, counts: readonly number[], sum: number): string {
  const les = [...BOUNDS.map(String), '+Inf'];
  const sep = labels === '' ? '' : ',';
  return (
    `# TYPE ${name} histogram\n` +
    les.map((le, i) => `${name}_bucket{${labels}${sep}le="${le}"} ${counts[i]}\n`).join('') +
    `${name}_sum${labels === '' ? '' : `{${labels}}`} ${sum}\n` +
    `${name}_count${labels === '' ? '' : `{${labels}}`} ${counts.at(-1)}\n`
  );
}

describe('sluice top: rates and quantiles', () => {
  test('a counter that went down restarted: its new value is the increase', () => {
    assert.equal(counterIncrease(10, 15), 5);
    assert.equal(counterIncrease(10, 3), 3);
    assert.equal(counterIncrease(undefined, 4), 4);
    assert.equal(counterIncrease(10, Number.NaN), 0);
  });

  test('increases: counters and histograms only; a histogram reset takes all its buckets anew', () => {
    const before = snap(
      `# TYPE c counter\nc 10\n# TYPE g gauge\ng 7\nu_total 4\n${histText('h', 'method="a"', [1, 2, 3, 4, 5, 6], 9)}`,
      0,
    );
    const after = snap(
      `# TYPE c counter\nc 12\n# TYPE g gauge\ng 1\nu_total 9\nnew_total 2\n${histText('h', 'method="a"', [0, 0, 1, 1, 2, 2], 3)}`,
      1000,
    );
    const got = new Map(increases(before, after).map((s) => [seriesKey(s.name, s.labels), s.value]));
    assert.equal(got.get('c'), 2);
    assert.equal(got.get('u_total'), 5);
    assert.equal(got.get('new_total'), 2, 'a series that appeared counts from zero');
    assert.equal(got.has('g'), false, 'a gauge has no increase');
    // Count went 6 → 2: reset; the +Inf bucket's 2 is the increase, not max(0, 2 - 6).
    assert.equal(got.get('h_count{method="a"}'), 2);
    assert.equal(got.get('h_bucket{le="1",method="a"}'), 1);
    assert.equal(got.get('h_bucket{le="0.001",method="a"}'), 0);
    assert.equal(got.get('h_sum{method="a"}'), 3);
  });

  test('histogram_quantile: inside the bucket that holds the true quantile, interpolated linearly', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 20, noNaN: true }), { minLength: 1, maxLength: 200 }),
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        (obs, q) => {
          const h = histogramOf(obs);
          const got = histogramQuantile(q, h);
          assert.ok(got !== undefined);
          const sorted = [...obs].sort((a, b) => a - b);
          const rank = q * obs.length;
          // The observation at that rank lies in one bucket; the estimate must lie in the same one.
          const truth = sorted[Math.max(0, Math.ceil(rank) - 1)] as number;
          const i = BOUNDS.findIndex((b) => truth <= b);
          if (i < 0) {
            assert.equal(got, BOUNDS.at(-1), 'a rank in +Inf answers the highest finite bound');
          } else {
            const lower = i === 0 ? 0 : (BOUNDS[i - 1] as number);
            assert.ok(
              got >= lower - 1e-12 && got <= (BOUNDS[i] as number) + 1e-12,
              `${got} not in (${lower}, ${BOUNDS[i]}]`,
            );
          }
        },
      ),
      { numRuns: 300 },
    );
    // The worked case: 10 observations, 5 ≤ 0.1 and 5 in (0.1, 1]: p50 = 0.1, p75 = 0.55.
    const h = [
      { le: 0.1, count: 5 },
      { le: 1, count: 10 },
      { le: Number.POSITIVE_INFINITY, count: 10 },
    ];
    assert.equal(histogramQuantile(0.5, h), 0.1);
    assert.ok(Math.abs((histogramQuantile(0.75, h) ?? 0) - 0.55) < 1e-12);
    assert.equal(histogramQuantile(0.5, [{ le: Number.POSITIVE_INFINITY, count: 0 }]), undefined);
    assert.equal(histogramQuantile(0.5, [{ le: 1, count: 3 }]), undefined, 'no +Inf bucket: not a histogram');
  });

  test('bucketsBy merges equal bounds across instances, per group', () => {
    const a = parseExposition(histText('h', 'method="x"', [1, 1, 2, 2, 2, 2], 1)).samples;
    const b = parseExposition(histText('h', 'method="x"', [0, 1, 1, 3, 3, 4], 30)).samples;
    const m = bucketsBy([...a, ...b], 'h', 'method').get('x');
    assert.deepEqual(
      m?.map((x) => x.count),
      [1, 2, 3, 5, 5, 6],
    );
  });

  test('one report over a cluster of two, one of which restarted between the scrapes', () => {
    const base = (o: {
      sessions: number;
      responses: number;
      fwd: number;
      fwdIn: number;
      http: number;
      stalls: number;
      queue: number;
      counts: number[];
    }): string =>
      '# TYPE sluice_sessions_active gauge\n' +
      `sluice_sessions_active ${o.sessions}\n` +
      '# TYPE sluice_streams_open gauge\n' +
      `sluice_streams_open{kind="post"} 1\nsluice_streams_open{kind="get"} 2\n` +
      '# TYPE sluice_responses_total counter\n' +
      `sluice_responses_total{method="tools/call",mode="json"} ${o.responses}\n` +
      `sluice_responses_total{method="tools/call",mode="sse"} 0\n` +
      histText('sluice_request_duration_seconds', 'method="tools/call"', o.counts, 1) +
      `# TYPE sluice_write_stalls_total counter\nsluice_write_stalls_total ${o.stalls}\n` +
      `# TYPE sluice_stream_queued_bytes_max gauge\nsluice_stream_queued_bytes_max ${o.queue}\n` +
      `# TYPE sluice_queued_bytes gauge\nsluice_queued_bytes ${o.queue}\n` +
      '# TYPE sluice_replays_declined_total counter\n' +
      `sluice_replays_declined_total{reason="evicted"} ${o.stalls}\n` +
      `# TYPE sluice_http_requests_total counter\nsluice_http_requests_total{protocol="http/1.1"} ${o.http}\n` +
      `# TYPE sluice_cluster_forwarded_total counter\nsluice_cluster_forwarded_total ${o.fwd}\n` +
      `# TYPE sluice_cluster_forwarded_in_total counter\nsluice_cluster_forwarded_in_total ${o.fwdIn}\n`;
    const zero = [0, 0, 0, 0, 0, 0];
    const a0 = snap(
      base({
        sessions: 3,
        responses: 100,
        fwd: 0,
        fwdIn: 10,
        http: 110,
        stalls: 1,
        queue: 10,
        counts: [0, 50, 100, 100, 100, 100],
      }),
      0,
    );
    const a1 = snap(
      base({
        sessions: 4,
        responses: 120,
        fwd: 0,
        fwdIn: 20,
        http: 140,
        stalls: 3,
        queue: 50,
        counts: [0, 50, 110, 120, 120, 120],
      }),
      2000,
    );
    // b restarted: its counters start again from small values.
    const b0 = snap(
      base({
        sessions: 1,
        responses: 500,
        fwd: 400,
        fwdIn: 0,
        http: 900,
        stalls: 9,
        queue: 0,
        counts: [0, 0, 0, 500, 500, 500],
      }),
      0,
    );
    const b1 = snap(
      base({ sessions: 1, responses: 0, fwd: 10, fwdIn: 0, http: 10, stalls: 0, queue: 70, counts: zero }),
      2000,
    );
    const r = buildReport(
      [
        { url: 'http://a/metrics', prev: a0, cur: a1 },
        { url: 'http://b/metrics', prev: b0, cur: b1 },
        { url: 'http://c/metrics', prev: undefined, cur: undefined, error: 'ECONNREFUSED' },
      ],
      new Date(0),
    );
    assert.equal(r.intervalSeconds, 2);
    assert.equal(r.sessions, 5);
    assert.deepEqual(r.streams, { post: 2, get: 4 });
    // a answered 20 (b's counter reset to 0: 0 more), over 2 s.
    assert.equal(r.requestsPerSecond, 10);
    assert.deepEqual(
      r.methods.map((m) => [m.method, m.perSecond]),
      [['tools/call', 10]],
    );
    // The 20 new observations of a: 10 in (0.01, 0.1], 10 in (0.1, 1]: p50 at the 0.1 bound.
    assert.equal(r.methods[0]?.p50, 0.1);
    assert.equal(r.writeStalls.perSecond, 1, 'a: +2, b reset to 0: 2 over 2 s');
    assert.deepEqual(r.replays.declinedPerSecond, { evicted: 1 });
    assert.deepEqual(r.queue, { bytes: 120, messages: 0, maxStreamBytes: 70 });
    // Forwarded: b sent 10 (after its reset); clients sent (30 + 10) - 10 forwarded in = 30.
    assert.equal(r.forwarded?.perSecond, 5);
    assert.equal(r.forwarded?.share, Math.round((10 / 30) * 1e4) / 1e4);
    assert.deepEqual(r.instances, [
      { url: 'http://a/metrics', up: true },
      { url: 'http://b/metrics', up: true },
      { url: 'http://c/metrics', up: false, error: 'ECONNREFUSED' },
    ]);
    // Without any sluice_cluster_* series there is no forwarded section.
    const solo = buildReport(
      [
        {
          url: 'x',
          prev: snap('sluice_sessions_active 1\n', 0),
          cur: snap('sluice_sessions_active 2\n', 1000),
        },
      ],
      new Date(0),
    );
    assert.equal(solo.forwarded, null);
    assert.equal(solo.sessions, 2);
  });
});

describe('sluice top: requests per method', () => {
  test('counted when they complete (the percentiles population); answered, without histograms', () => {
    // A long call answered (responses_total) in the previous interval completes in this one.
    const timed = (responses: number, counts: number[]): string =>
      `# TYPE sluice_responses_total counter\nsluice_responses_total{method="tools/call",mode="sse"} ${responses}\n` +
      histText('sluice_request_duration_seconds', 'method="tools/call"', counts, 1);
    const r = buildReport(
      [
        {
          url: 'x',
          prev: snap(timed(1, [0, 0, 0, 0, 0, 0]), 0),
          cur: snap(timed(1, [0, 0, 0, 0, 1, 1]), 1000),
        },
      ],
      new Date(0),
    );
    assert.equal(r.requestsPerSecond, 1);
    assert.deepEqual(r.methods, [{ method: 'tools/call', perSecond: 1, p50: 5.5, p99: 9.91 }]);
    // metrics: false exposes only responses_total{method="all"}.
    const plain = (n: number): string =>
      `# TYPE sluice_responses_total counter\nsluice_responses_total{method="all",mode="json"} ${n}\n`;
    const p = buildReport([{ url: 'x', prev: snap(plain(3), 0), cur: snap(plain(7), 2000) }], new Date(0));
    assert.equal(p.requestsPerSecond, 2);
    assert.deepEqual(p.methods, [{ method: 'all', perSecond: 2, p50: null, p99: null }]);
  });
});

describe('sluice top: per tool', () => {
  test('tools/call by gen_ai_tool_name from the semantic-convention histogram; errors by error_type', () => {
    const name = 'mcp_server_operation_duration_seconds';
    const series = (labels: string, counts: number[]): string =>
      histText(name, labels, counts, 1).replace(/^# TYPE .*\n/, '');
    const text = (echo: number[], slow: number[], slowErr: number[], init: number[]): string =>
      `# TYPE ${name} histogram\n` +
      series('mcp_method_name="tools/call",gen_ai_tool_name="echo"', echo) +
      series('mcp_method_name="tools/call",gen_ai_tool_name="slow"', slow) +
      series('mcp_method_name="tools/call",gen_ai_tool_name="slow",error_type="tool_error"', slowErr) +
      // Not a tool call: never a row, whatever its labels.
      series('mcp_method_name="initialize",gen_ai_tool_name="echo"', init);
    const zero = [0, 0, 0, 0, 0, 0];
    const r = buildReport(
      [
        {
          url: 'x',
          prev: snap(text(zero, zero, zero, zero), 0),
          // echo: 8 in (0.001, 0.01]; slow: 2 in (1, 10] and 2 failed in (1, 10].
          cur: snap(
            text([0, 8, 8, 8, 8, 8], [0, 0, 0, 0, 2, 2], [0, 0, 0, 0, 2, 2], [5, 5, 5, 5, 5, 5]),
            2000,
          ),
        },
      ],
      new Date(0),
    );
    assert.deepEqual(
      r.tools.map((t) => [t.tool, t.perSecond, t.errorsPerSecond]),
      [
        ['echo', 4, 0],
        ['slow', 2, 1],
      ],
    );
    assert.ok((r.tools[0]?.p50 ?? 1) <= 0.01, `echo p50 ${r.tools[0]?.p50}`);
    assert.ok((r.tools[1]?.p50 ?? 0) > 1, `slow p50 ${r.tools[1]?.p50}`);
    const frame = renderFrame(r, 100);
    assert.match(frame, /^tool {24} +calls\/s/m);
    assert.match(frame, /^slow {24} +2\.00 +\S+ +\S+ +1\.00$/m);
  });
});

describe('sluice top: which URL is scraped', () => {
  test('the MCP endpoint means /metrics on its origin; a /metrics URL is taken as it is', () => {
    assert.equal(metricsUrl('http://127.0.0.1:3000/mcp').href, 'http://127.0.0.1:3000/metrics');
    assert.equal(metricsUrl('http://127.0.0.1:3000/mcp?x=1#f').href, 'http://127.0.0.1:3000/metrics');
    assert.equal(metricsUrl('https://h.example/').href, 'https://h.example/metrics');
    assert.equal(metricsUrl('http://[::1]:9/ops/metrics?a=b').href, 'http://[::1]:9/ops/metrics?a=b');
    assert.throws(() => metricsUrl('localhost:3000'), /not an http\(s\) URL/);
    assert.throws(() => metricsUrl('not a url'), /is not a URL/);
    assert.throws(() => metricsUrl('file:///etc/passwd'), /not an http\(s\) URL/);
  });
});

describe('sluice top: the terminal frame', () => {
  test('every figure of the report, units scaled, a down instance named, lines cut to the width', () => {
    const report = buildReport(
      [
        {
          url: 'http://a/metrics',
          prev: snap('sluice_sessions_active 0\n', 0),
          cur: snap(
            'sluice_sessions_active 3\nsluice_streams_open{kind="post"} 2\nsluice_streams_open{kind="get"} 1\n' +
              'sluice_queued_bytes 2048\nsluice_stream_queued_bytes_max 1536\n' +
              '# TYPE sluice_responses_total counter\nsluice_responses_total{method="tools/call",mode="json"} 4\n',
            2000,
          ),
        },
        { url: 'http://b/metrics', prev: undefined, cur: undefined, error: 'http://b/metrics: ECONNREFUSED' },
      ],
      new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
    );
    const frame = renderFrame(report, 60);
    const lines = frame.split('\n');
    assert.equal(lines[0], 'sluice top — 2026-01-02 03:04:05Z  interval 2.0s  instances ');
    assert.ok(lines.every((l) => l.length <= 60));
    assert.match(frame, /^ {2}DOWN http:\/\/b\/metrics: ECONNREFUSED$/m);
    assert.match(frame, /^sessions 3 {3}streams 3 \(post 2, get 1\) {3}requests 2\.00\/s/m);
    assert.match(frame, /^queue 2\.0KiB in 0 msg \(largest stream 1\.5KiB\)/m);
    // Sessions whose server hibernation dropped are shown when there are any.
    const sleepy = buildReport(
      [
        {
          url: 'http://a/metrics',
          prev: snap('sluice_sessions_active 0\n', 0),
          cur: snap('sluice_sessions_active 5\nsluice_sessions_asleep 4\n', 2000),
        },
      ],
      new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
    );
    assert.equal(sleepy.sessionsAsleep, 4);
    assert.match(renderFrame(sleepy, 80), /^sessions 5 \(4 asleep\) {3}streams 0/m);
    assert.match(renderFrame(report, 100), /^tools\/call {24}2\.00 {11}- {11}-$/m);
    assert.doesNotMatch(frame, /forwarded/, 'no cluster, no forwarded line');
  });
});

describe('sluice top: tasks', () => {
  test('running summed, created and answered-plainly rates over two instances; task-limit refusals among errors', () => {
    const text = (o: { running: number; created: number; within: number; refused: number; limit: number }) =>
      `# TYPE sluice_tasks_running gauge\nsluice_tasks_running ${o.running}\n` +
      `# TYPE sluice_tasks_created_total counter\nsluice_tasks_created_total ${o.created}\n` +
      `# TYPE sluice_task_limit_refusals_total counter\nsluice_task_limit_refusals_total ${o.limit}\n` +
      '# TYPE sluice_task_calls_plain_total counter\n' +
      `sluice_task_calls_plain_total{outcome="within-time"} ${o.within}\n` +
      `sluice_task_calls_plain_total{outcome="task-refused"} ${o.refused}\n`;
    const r = buildReport(
      [
        {
          url: 'a',
          prev: snap(text({ running: 1, created: 10, within: 100, refused: 0, limit: 0 }), 0),
          cur: snap(text({ running: 3, created: 14, within: 120, refused: 2, limit: 2 }), 2000),
        },
        {
          url: 'b',
          prev: snap(text({ running: 0, created: 0, within: 0, refused: 0, limit: 0 }), 0),
          cur: snap(text({ running: 2, created: 4, within: 20, refused: 0, limit: 0 }), 2000),
        },
      ],
      new Date(0),
    );
    assert.deepEqual(r.tasks, {
      running: 5,
      createdPerSecond: 4,
      plainPerSecond: { withinTime: 20, taskRefused: 1 },
    });
    assert.equal(r.errorsPerSecond['task-limit'], 1);
    assert.match(
      renderFrame(r, 120),
      /^tasks running 5, created 4\.00\/s {3}answered plainly 20\.0\/s within taskAfterMs, 1\.00\/s task refused$/m,
    );
    // A server without tasks has no tasks line.
    const none = buildReport(
      [
        {
          url: 'x',
          prev: snap('sluice_sessions_active 1\n', 0),
          cur: snap('sluice_sessions_active 1\n', 1000),
        },
      ],
      new Date(0),
    );
    assert.equal(none.tasks, null);
    assert.doesNotMatch(renderFrame(none, 120), /^tasks/m);
  });
});
