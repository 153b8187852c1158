// Section (g): runtimes and protocols. The same demo server behind
//   - the node:http binding (`sluice serve`),
//   - the fetch binding under Node (test/runtimes/node-fetch-serve.mjs: a node:http ↔ fetch adapter),
//   - the fetch binding under Bun (test/runtimes/bun-serve.mjs: Bun.serve),
// measured on echo (requests/s, server CPU µs per request; 16 concurrent callers over keep-alive)
// and on one progress flood (events/s, server CPU µs per event); then HTTP/2 vs HTTPS/1.1 for 50
// concurrent streaming calls (`sluice serve --tls-*` with and without --http2; events/s and server
// CPU per event). Server CPU is read from /proc for the server's pid, so Bun is measured the same
// way as Node. Each server runs alone; the client runs in this process on the same machine.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, Pool, request } from 'undici';
import { makeCert } from '../test/helpers/certs.js';
import { readCpuMicros } from './proc.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ACCEPT = 'application/json, text/event-stream';
const READY = /^sluice listening on (https?:\/\/\S+)$/m;

export interface RuntimeRow {
  server: string;
  echoRps: number;
  echoCpuUsPerReq: number;
  floodEventsPerSec: number;
  floodCpuUsPerEvent: number;
}

export interface ProtocolRow {
  protocol: 'http/1.1 (TLS)' | 'h2';
  streams: number;
  eventsPerSec: number;
  cpuUsPerEvent: number;
}

export interface RuntimeBench {
  rows: RuntimeRow[];
  protocols: ProtocolRow[];
  unavailable: Record<string, string>;
}

interface Started {
  url: string;
  child: ChildProcess;
  close(): Promise<void>;
}

async function start(cmd: string, args: string[]): Promise<Started> {
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd}: no listening line in 30 s`)), 30_000);
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = READY.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited (${code}) before listening`));
    });
  });
  return {
    url,
    child,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

interface Caller {
  post(body: unknown, sid?: string): Promise<{ status: number; sid: string | undefined; text: string }>;
  close(): Promise<void>;
}

function caller(url: string, dispatcher: Agent | Pool): Caller {
  return {
    async post(body, sid) {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: ACCEPT };
      if (sid !== undefined) {
        headers['mcp-session-id'] = sid;
        headers['mcp-protocol-version'] = '2025-11-25';
      }
      const r = await request(url, {
        method: 'POST',
        dispatcher,
        headers,
        body: JSON.stringify(body),
        // Independent calls: let undici multiplex them on h2 (it sends a non-idempotent request
        // only when nothing else is in flight).
        idempotent: true,
      });
      const text = await r.body.text();
      const h = r.headers['mcp-session-id'];
      return { status: r.statusCode, sid: typeof h === 'string' ? h : undefined, text };
    },
    close: () => dispatcher.close(),
  };
}

async function session(c: Caller): Promise<string> {
  const init = await c.post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  });
  if (init.sid === undefined) throw new Error(`initialize: ${init.status} ${init.text.slice(0, 200)}`);
  await c.post({ jsonrpc: '2.0', method: 'notifications/initialized' }, init.sid);
  return init.sid;
}

/** Echo calls from `concurrency` callers for `ms`: requests/s and server CPU µs per request. */
async function echo(s: Started, ms: number, concurrency: number): Promise<[number, number]> {
  const c = caller(s.url, new Pool(new URL(s.url).origin, { connections: concurrency }));
  try {
    const sid = await session(c);
    const call = (i: number) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x' } },
    });
    for (let i = 0; i < 200; i++) await c.post(call(i), sid); // warm-up
    const pid = s.child.pid ?? 0;
    const cpu0 = readCpuMicros(pid);
    const t0 = performance.now();
    let n = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() - t0 < ms) {
          const r = await c.post(call(n), sid);
          if (r.status !== 200) throw new Error(`echo: ${r.status}`);
          n++;
        }
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    return [n / secs, (readCpuMicros(pid) - cpu0) / n];
  } finally {
    await c.close();
  }
}

/** `streams` concurrent flood calls of `count` progress events each: events/s and CPU µs/event. */
async function flood(
  s: Started,
  dispatcher: Agent | Pool,
  streams: number,
  count: number,
): Promise<[number, number]> {
  const c = caller(s.url, dispatcher);
  try {
    const sid = await session(c);
    const call = (i: number, n: number) => ({
      jsonrpc: '2.0',
      id: `f${i}`,
      method: 'tools/call',
      params: { name: 'flood', arguments: { count: n }, _meta: { progressToken: `t${i}` } },
    });
    await c.post(call(-1, 1000), sid); // warm-up
    const pid = s.child.pid ?? 0;
    const cpu0 = readCpuMicros(pid);
    const t0 = performance.now();
    const texts = await Promise.all(Array.from({ length: streams }, (_, i) => c.post(call(i, count), sid)));
    const secs = (performance.now() - t0) / 1000;
    let events = 0;
    for (const t of texts) events += (t.text.match(/notifications\/progress/g) ?? []).length;
    return [events / secs, (readCpuMicros(pid) - cpu0) / Math.max(1, events)];
  } finally {
    await c.close();
  }
}

export async function runRuntimes(quick: boolean, log: (line: string) => void): Promise<RuntimeBench> {
  const out: RuntimeBench = { rows: [], protocols: [], unavailable: {} };
  const echoMs = quick ? 3_000 : 8_000;
  const floodCount = quick ? 20_000 : 100_000;
  const cli = join(ROOT, 'dist', 'src', 'cli', 'main.js');
  const bun = join(ROOT, 'node_modules', '.bin', 'bun');
  const servers: [string, string, string[]][] = [
    ['node:http binding', process.execPath, [cli, 'serve', '--port', '0', '--keepalive-ms', '0']],
    ['fetch binding, Node', process.execPath, [join(ROOT, 'test', 'runtimes', 'node-fetch-serve.mjs')]],
    ['fetch binding, Bun', bun, [join(ROOT, 'test', 'runtimes', 'bun-serve.mjs')]],
  ];
  for (const [label, cmd, args] of servers) {
    if (!existsSync(cmd)) {
      out.unavailable[label] = `${cmd} missing`;
      continue;
    }
    let s: Started | undefined;
    try {
      s = await start(cmd, args);
      const [rps, cpuReq] = await echo(s, echoMs, 16);
      const [eps, cpuEv] = await flood(s, new Pool(new URL(s.url).origin, { connections: 1 }), 1, floodCount);
      out.rows.push({
        server: label,
        echoRps: rps,
        echoCpuUsPerReq: cpuReq,
        floodEventsPerSec: eps,
        floodCpuUsPerEvent: cpuEv,
      });
      log(
        `(g) ${label}: echo ${rps.toFixed(0)} req/s, ${cpuReq.toFixed(0)} µs/req; flood ${eps.toFixed(0)} ev/s, ${cpuEv.toFixed(2)} µs/ev`,
      );
    } catch (e) {
      out.unavailable[label] = e instanceof Error ? e.message : String(e);
    } finally {
      await s?.close();
    }
  }
  const c = makeCert();
  if (typeof c === 'string') {
    out.unavailable['h2 vs http/1.1'] = c;
    return out;
  }
  try {
    const ca = c.cert;
    const streams = 50;
    const perStream = quick ? 2_000 : 10_000;
    for (const protocol of ['http/1.1 (TLS)', 'h2'] as const) {
      const h2 = protocol === 'h2';
      const s = await start(process.execPath, [
        cli,
        'serve',
        '--port',
        '0',
        '--keepalive-ms',
        '0',
        '--tls-cert',
        c.certFile,
        '--tls-key',
        c.keyFile,
        ...(h2 ? ['--http2'] : []),
      ]);
      try {
        const dispatcher = h2
          ? new Agent({ allowH2: true, connections: 1, pipelining: 64, connect: { ca } })
          : new Pool(new URL(s.url).origin, { connections: streams, connect: { ca } });
        const [eps, cpuEv] = await flood(s, dispatcher, streams, perStream);
        out.protocols.push({ protocol, streams, eventsPerSec: eps, cpuUsPerEvent: cpuEv });
        log(`(g) ${protocol}, ${streams} streams: ${eps.toFixed(0)} ev/s, ${cpuEv.toFixed(2)} µs/ev`);
      } finally {
        await s.close();
      }
    }
  } finally {
    c.remove();
  }
  return out;
}

export function renderRuntimes(r: RuntimeBench): string {
  const lines = [
    '## (g) Runtimes and protocols',
    '',
    '| server | echo req/s | server CPU µs/req | progress events/s | server CPU µs/event |',
    '|---|---:|---:|---:|---:|',
    ...r.rows.map(
      (x) =>
        `| ${x.server} | ${x.echoRps.toFixed(0)} | ${x.echoCpuUsPerReq.toFixed(0)} | ${x.floodEventsPerSec.toFixed(0)} | ${x.floodCpuUsPerEvent.toFixed(2)} |`,
    ),
    '',
    '| protocol | concurrent streams | progress events/s | server CPU µs/event |',
    '|---|---:|---:|---:|',
    ...r.protocols.map(
      (x) =>
        `| ${x.protocol} | ${x.streams} | ${x.eventsPerSec.toFixed(0)} | ${x.cpuUsPerEvent.toFixed(2)} |`,
    ),
  ];
  for (const [k, v] of Object.entries(r.unavailable)) lines.push('', `${k}: unavailable (${v})`);
  return `${lines.join('\n')}\n`;
}
