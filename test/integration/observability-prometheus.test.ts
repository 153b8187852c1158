// deploy/grafana/sluice.json and deploy/prometheus/sluice-alerts.yml against a real Prometheus: it
// scrapes a `sluice serve --metrics` and a 2-instance `sluice serve --redis --metrics` cluster every
// second while a bounded load runs (sessions through both instances, so most requests are
// forwarded), and a `sluice serve --oauth-issuer --metrics` in front of a real authorization server
// (oidc-provider) that refuses three requests for three reasons; then every panel's query must
// return series through /api/v1/query without error, the ones the load drives must show it, and
// every alert rule must load (promtool too) and evaluate with health "ok".
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { signingKey, TestAuthServer } from '../helpers/auth-server.js';
import { RawSession } from '../helpers/http.js';
import { driveLoad, holdStream } from '../helpers/observe-load.js';
import {
  bindGrafanaVariables,
  dashboardQueries,
  findPrometheus,
  findPromtool,
  PROMETHEUS_MISSING,
  type Prometheus,
  startPrometheus,
} from '../helpers/prometheus.js';
import { findRedis, REDIS_MISSING, type Redis, startRedis } from '../helpers/redis.js';
import { repoRoot, type SpawnedServe, spawnServe } from '../helpers/spawn-serve.js';

const DASHBOARD = join(repoRoot(), 'deploy', 'grafana', 'sluice.json');
const ALERTS = join(repoRoot(), 'deploy', 'prometheus', 'sluice-alerts.yml');
/** Rate window bound to $__rate_interval: long enough for the whole load, at a 1 s scrape. */
const WINDOW = '30s';

const missing =
  findPrometheus() === undefined ? PROMETHEUS_MISSING : findRedis() === undefined ? REDIS_MISSING : undefined;
if (missing !== undefined) process.stderr.write(`\n${'!'.repeat(72)}\n!! ${missing}\n${'!'.repeat(72)}\n\n`);

const hostPort = (s: SpawnedServe): string => new URL(s.url).host;
const num = (v: string): number => Number(v);

describe('observability: the dashboard and the alerts on a real Prometheus', {
  skip: missing ?? false,
}, () => {
  let redis: Redis;
  const servers: SpawnedServe[] = [];
  let prom: Prometheus;
  let as: TestAuthServer;

  before(async () => {
    redis = await startRedis();
    as = await TestAuthServer.start({ keys: [await signingKey('k1')], scopes: ['mcp:read', 'mcp:write'] });
    const started = await Promise.all([
      spawnServe(['--metrics', '--keepalive-ms', '2000'], {}, 45_000),
      spawnServe(['--metrics', '--redis', redis.url, '--keepalive-ms', '2000'], {}, 45_000),
      spawnServe(['--metrics', '--redis', redis.url, '--keepalive-ms', '2000'], {}, 45_000),
      spawnServe(['--metrics', '--oauth-issuer', as.issuer, '--oauth-scopes', 'mcp:read'], {}, 45_000),
    ]);
    servers.push(...started);
    prom = await startPrometheus({ targets: servers.map(hostPort), ruleFiles: [ALERTS] });
    // Every target scraped at least once before the load, so rates start from a sample.
    const by = Date.now() + 15_000;
    while ((await prom.query('up{job="sluice"} == 1')).length < servers.length) {
      assert.ok(Date.now() < by, `targets not up within 15 s:\n${prom.output()}`);
      await delay(200);
    }
    // The "Auth refusals by reason" panel: no token, a token for another resource, a missing scope;
    // each twice, with the load between, since a series Prometheus first sees at 1 shows no increase.
    const guarded = started[3] as SpawnedServe;
    const foreign = await as.token('http://127.0.0.1:1/mcp', 'mcp:read');
    const writeOnly = await as.token(guarded.url, 'mcp:write');
    const refuse = async (): Promise<void> => {
      await assert.rejects(new RawSession(guarded.url).init(), /401/);
      await assert.rejects(new RawSession(guarded.url, { authorization: `Bearer ${foreign}` }).init(), /401/);
      await assert.rejects(
        new RawSession(guarded.url, { authorization: `Bearer ${writeOnly}` }).init(),
        /403/,
      );
    };
    await refuse();
    const [solo, a, b] = servers as [SpawnedServe, SpawnedServe, SpawnedServe];
    const held = await Promise.all([holdStream(solo.url), holdStream(a.url), holdStream(b.url)]);
    const [one, two] = await Promise.all([
      driveLoad([solo.url], { rounds: 6, deadlineMs: 15_000, pauseMs: 300 }),
      driveLoad([a.url, b.url], { rounds: 6, deadlineMs: 15_000, pauseMs: 300 }),
    ]);
    assert.ok(one.rounds >= 2 && two.rounds >= 2, `load ran ${one.rounds} and ${two.rounds} rounds`);
    await refuse();
    // Two more scrapes after the load, with the GET streams still open.
    await delay(2_500);
    for (const h of held) await h.close();
  });

  after(async () => {
    await prom?.stop();
    for (const s of servers) await s.close().catch(() => undefined);
    await redis?.stop();
    await as?.stop();
  });

  test('every panel query of the dashboard returns series, without error', async () => {
    const dashboard: unknown = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
    const queries = dashboardQueries(dashboard);
    assert.ok(queries.length >= 25, `only ${queries.length} queries in the dashboard`);
    const empty: string[] = [];
    for (const { panel, expr } of queries) {
      const result = await prom.query(bindGrafanaVariables(expr, WINDOW)).catch((e: unknown) => {
        throw new Error(`panel "${panel}": ${expr}\n${String(e)}`);
      });
      if (result.length === 0) empty.push(`${panel}: ${expr}`);
    }
    assert.deepEqual(empty, [], 'panel queries with no series');
  });

  test('the panels show the load: requests, forwarded share, hop latency, replays, refusals and their reasons, streams', async () => {
    const one = async (expr: string): Promise<Record<string, number>> => {
      const r = await prom.query(bindGrafanaVariables(expr, WINDOW));
      return Object.fromEntries(
        r.map((s) => [Object.values(s.metric).join(',') || 'value', num(s.value[1])]),
      );
    };
    const sel = 'job=~"$job",instance=~"$instance"';
    const methods = await one(`sum by (method) (increase(sluice_responses_total{${sel}}[1h]))`);
    assert.ok((methods['tools/call'] ?? 0) > 50, `tools/call answered: ${JSON.stringify(methods)}`);
    assert.ok((methods['tools/list'] ?? 0) > 5, `tools/list answered: ${JSON.stringify(methods)}`);
    const forwarded = await one(
      'sum(increase(sluice_cluster_forwarded_total[1h])) / (sum(increase(sluice_http_requests_total{instance=~".*"}[1h]) and on(instance) sluice_cluster_lease_state) - sum(increase(sluice_cluster_forwarded_in_total[1h])))',
    );
    const share = forwarded['value'] ?? 0;
    // Every session's calls go through both instances: about half of the cluster's requests are forwarded.
    assert.ok(share > 0.2 && share < 0.8, `forwarded share ${share}`);
    const hop = await one(
      'histogram_quantile(0.99, sum by (le) (increase(sluice_cluster_forward_seconds_bucket[1h])))',
    );
    assert.ok(Number.isFinite(hop['value']) && (hop['value'] ?? 0) > 0, `hop p99 ${JSON.stringify(hop)}`);
    const latency = await one(
      `histogram_quantile(0.5, sum by (method, le) (increase(sluice_request_duration_seconds_bucket{${sel}}[1h])))`,
    );
    assert.ok(Number.isFinite(latency['tools/call']), `tools/call p50 ${JSON.stringify(latency)}`);
    // Per tool (the semantic-convention histogram): the load's echo and sleep calls, apart.
    const tools = await one(
      `histogram_quantile(0.5, sum by (gen_ai_tool_name, le) (increase(mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",${sel}}[1h])))`,
    );
    assert.ok(
      Number.isFinite(tools['echo']) && Number.isFinite(tools['sleep']),
      `per-tool p50 ${JSON.stringify(tools)}`,
    );
    // The sleep tool sleeps 5 to 65 ms; echo answers at once: the panel tells them apart.
    assert.ok((tools['sleep'] ?? 0) > (tools['echo'] ?? 0), `per-tool p50 ${JSON.stringify(tools)}`);
    const replays = await one('sum(increase(sluice_replays_served_total[1h]))');
    assert.ok((replays['value'] ?? 0) >= 4, `replays served ${JSON.stringify(replays)}`);
    const declined = await one('sum by (reason) (increase(sluice_replays_declined_total[1h]))');
    assert.ok((declined['malformed'] ?? 0) >= 4, `replays declined ${JSON.stringify(declined)}`);
    const refused = await one('sum by (reason) (increase(sluice_refusals_total[1h]))');
    assert.ok((refused['origin'] ?? 0) >= 4, `refusals ${JSON.stringify(refused)}`);
    assert.ok((refused['auth'] ?? 0) >= 3, `refusals ${JSON.stringify(refused)}`);
    // The panel's query, by reason: the three refusals the oauth server gave, each under its own.
    const auth = await one(`sum by (reason) (increase(sluice_auth_refusals_total{${sel}}[1h]))`);
    for (const reason of ['unauthorized', 'token-audience', 'insufficient-scope'])
      assert.ok((auth[reason] ?? 0) > 0, `auth refusals ${JSON.stringify(auth)}`);
    const streams = await one('max_over_time(sum(sluice_streams_open)[1h:1s])');
    assert.ok((streams['value'] ?? 0) >= 3, `open streams peaked at ${JSON.stringify(streams)}`);
    const stalls = await one('sum(increase(sluice_write_stalls_total[1h]))');
    assert.ok((stalls['value'] ?? 0) > 0, `write stalls ${JSON.stringify(stalls)}`);
    const sessions = await one('sum(increase(sluice_sessions_created_total[1h]))');
    assert.ok((sessions['value'] ?? 0) >= 7, `sessions created ${JSON.stringify(sessions)}`);
  });

  test('every alert rule loads, and evaluates with health ok; promtool accepts the file', async () => {
    const text = readFileSync(ALERTS, 'utf8');
    const written = [...text.matchAll(/^\s*- alert: (\w+)$/gm)].map((m) => m[1]);
    assert.ok(written.length >= 10, `only ${written.length} alerts in the file`);
    type Rule = { name: string; query: string; health: string; lastError?: string; lastEvaluation: string };
    const rulesOf = async (): Promise<Rule[]> => {
      const data = (await prom.api('/api/v1/rules?type=alert')) as { groups: { rules: Rule[] }[] };
      return data.groups.flatMap((g) => g.rules);
    };
    let rules = await rulesOf();
    assert.deepEqual(rules.map((r) => r.name).sort(), [...written].sort());
    // Evaluated at least once since the load (every second).
    const by = Date.now() + 10_000;
    while (rules.some((r) => r.lastEvaluation.startsWith('0001'))) {
      assert.ok(Date.now() < by, 'rules not evaluated within 10 s');
      await delay(200);
      rules = await rulesOf();
    }
    for (const r of rules) {
      assert.equal(r.health, 'ok', `${r.name}: ${r.lastError ?? ''}`);
      // The same expression through the query API (an instant query now).
      await prom.query(r.query).catch((e: unknown) => {
        throw new Error(`${r.name}: ${r.query}\n${String(e)}`);
      });
    }
    const promtool = findPromtool();
    if (promtool === undefined) {
      process.stderr.write(
        '\n!! promtool missing: `promtool check rules` not run (Debian ships it with prometheus)\n\n',
      );
    } else {
      const r = spawnSync(promtool, ['check', 'rules', ALERTS], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
      assert.match(r.stdout, new RegExp(`SUCCESS: ${written.length} rules found`));
    }
  });

  test('no alert fires on this healthy, briefly loaded deployment (the thresholds are not hair-triggers)', async () => {
    const firing = (await prom.query('ALERTS{alertstate="firing"}')).map((s) => s.metric['alertname']);
    assert.deepEqual(firing, []);
  });
});
