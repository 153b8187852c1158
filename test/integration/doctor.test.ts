/**
 * `sluice doctor` against a real nginx configured right and wrong in each way the architecture notes
 * warn about: the verdicts must name the problem (or, for HTTP/1.0 upstream, must not invent one:
 * nginx re-frames the upstream body and the server's X-Accel-Buffering still unbuffers it).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, describe, test } from 'node:test';
import { renderText } from '../../src/doctor/report.js';
import { runDoctor } from '../../src/doctor/run.js';
import type { DoctorReport, Verdict } from '../../src/doctor/types.js';
import { withDeadline } from '../helpers/deadline.js';
import {
  type Nginx,
  RECOMMENDED_LOCATION,
  skipWithoutNginx,
  startProxied,
  type startUpstream,
  stopProxied,
} from '../helpers/nginx.js';

after(stopProxied);

async function diagnose(
  serverOptions: Parameters<typeof startUpstream>[0],
  nginx: { location?: string; http?: string },
  idleSeconds = 3,
): Promise<{ report: DoctorReport; v: (id: string) => Verdict; text: string; nginx: Nginx }> {
  const { nginx: n } = await startProxied(serverOptions, nginx);
  const report = await withDeadline(runDoctor({ url: n.url, idleSeconds }), 60_000, 'doctor run');
  const text = renderText(report);
  const v = (id: string): Verdict => {
    const found = report.verdicts.find((x) => x.id === id);
    assert.ok(found, `verdict ${id} present:\n${text}`);
    return found;
  };
  return { report, v, text, nginx: n };
}

describe('sluice doctor through nginx', () => {
  test('right config: every check ok, exit code 0', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { report, v, text } = await diagnose({ keepaliveMs: 1_000 }, { location: RECOMMENDED_LOCATION });
    for (const id of [
      'initialize',
      'buffering',
      'headers',
      'compression',
      'unknown-session',
      'method-not-allowed',
      'idle',
      'delete',
    ]) {
      assert.equal(v(id).status, 'ok', `${id}:\n${text}`);
    }
    assert.equal(report.ok, true);
    assert.match(v('buffering').reason, /delivered as produced/);
    assert.match(v('idle').reason, /keepalive comments every/);
  });

  test('buffering on and X-Accel-Buffering ignored: buffering fails and names the nginx fix', async (t) => {
    if (skipWithoutNginx(t)) return;
    // `proxy_hide_header X-Accel-Buffering` only hides it from the client — nginx still obeys it
    // (see the next test). `proxy_ignore_headers` is what makes nginx buffer anyway.
    const { report, v, text } = await diagnose(
      { keepaliveMs: 1_000 },
      { location: 'proxy_ignore_headers X-Accel-Buffering;' },
    );
    const b = v('buffering');
    assert.equal(b.status, 'fail', text);
    // The probe's 40 events overflow nginx's proxy buffers, which then leave as each one fills.
    assert.match(b.reason, /one lump|in bursts/);
    assert.match(b.fix?.nginx ?? '', /proxy_buffering off/);
    assert.equal(report.ok, false);
    assert.match(text, /fix \(nginx\): .*proxy_buffering off/);
  });

  test('proxy_hide_header X-Accel-Buffering: nginx still honours it, the doctor sees no buffering', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { v, text } = await diagnose(
      { keepaliveMs: 1_000 },
      { location: 'proxy_hide_header X-Accel-Buffering;' },
    );
    assert.equal(v('buffering').status, 'ok', text);
  });

  test('short proxy_read_timeout with keepalive off: idle fails at the second it was cut', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { report, v, text } = await diagnose(
      { keepaliveMs: 0 },
      { location: 'proxy_buffering off; proxy_read_timeout 2s;' },
      5,
    );
    const idle = v('idle');
    assert.equal(idle.status, 'fail', text);
    const cutAt = Number(idle.details?.['cutAtSeconds']);
    assert.ok(cutAt >= 1.5 && cutAt <= 3.5, `cut near 2 s, got ${cutAt}:\n${text}`);
    assert.match(idle.reason, /cut at second/);
    assert.match(idle.reason, /no keepalive comments/);
    assert.match(idle.fix?.nginx ?? '', /proxy_read_timeout/);
    assert.match(idle.fix?.alb ?? '', /60 s/);
    assert.match(idle.fix?.server ?? '', /keepaliveMs/);
    assert.equal(report.ok, false);
  });

  test('gzip on for text/event-stream: compression is flagged with the exclusion', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { v, text } = await diagnose(
      { keepaliveMs: 1_000 },
      { http: 'gzip on; gzip_types text/event-stream application/json;' },
    );
    const c = v('compression');
    assert.equal(c.status, 'warn', text);
    assert.match(c.reason, /Content-Encoding: gzip/);
    assert.match(c.fix?.nginx ?? '', /gzip off;/);
    assert.match(c.fix?.nginx ?? '', /gzip_types/);
    // nginx flushes gzip per event on an unbuffered response, so the stream still flows.
    assert.equal(v('buffering').status, 'ok', text);
  });

  test('HTTP/1.0 upstream (proxy_http_version 1.0): no false alarm — the path streams', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { report, v, text } = await diagnose(
      { keepaliveMs: 1_000 },
      { location: 'proxy_http_version 1.0;' },
    );
    assert.equal(v('buffering').status, 'ok', text);
    assert.match(String(v('initialize').details?.['httpVersion']), /not observable/);
    assert.equal(report.ok, true, text);
  });

  test('CLI: --json output and exit code 1 on a failing path', async (t) => {
    if (skipWithoutNginx(t)) return;
    const { nginx: n } = await startProxied(
      { keepaliveMs: 1_000 },
      { location: 'proxy_ignore_headers X-Accel-Buffering;' },
    );
    const child = spawn(
      process.execPath,
      ['dist/src/cli/main.js', 'doctor', n.url, '--json', '--idle-seconds', '2', '--header', 'X-Doctor: yes'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    const code = await withDeadline(
      new Promise<number | null>((resolve) => child.once('exit', resolve)),
      60_000,
      'sluice doctor exit',
    );
    assert.equal(code, 1, out);
    const report = JSON.parse(out) as DoctorReport;
    assert.equal(report.ok, false);
    assert.equal(report.verdicts.find((v) => v.id === 'buffering')?.status, 'fail');
  });
});
