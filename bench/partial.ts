// Section (f), partial output: deltas of text per second on one stream, server CPU per delta, MB/s
// of text delivered, and time to the first frame of a tool that floods, for three servers:
//   raw         node:http writing prepared SSE frames (the ceiling: no MCP, no SDK)
//   sluice      an SDK McpServer tool on Sluice using partialResults(extra) (the fast path)
//   sluice-sdk  the same tool sending the same notifications through extra.sendNotification
// Each server runs in its own child process (this file with --server KIND); the client (this
// process) reads the SSE answer at full speed and checks that the text arrived complete.
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createParser } from 'eventsource-parser';
import { z } from 'zod';
import { partialResults, serve } from '../src/server/index.js';
import { BASE_HEADERS, openSession, post } from './mcp-http.js';
import { median } from './stats.js';

export const PARTIAL_KINDS = ['raw', 'sluice', 'sluice-sdk'] as const;
type Kind = (typeof PARTIAL_KINDS)[number];
const WORD = 'word ';

export interface PartialRun {
  server: Kind;
  rep: number;
  deltas: number;
  seconds: number;
  deltasPerSec: number;
  textMBps: number;
  firstFrameMs: number;
  cpuUsPerDelta: number;
  /** SSE frames that carried the deltas (fewer than deltas when queued deltas were merged). */
  frames: number;
}

// ---- server children ---------------------------------------------------------------------------

function tool(kind: 'sluice' | 'sluice-sdk'): McpServer {
  const server = new McpServer({ name: 'bench-partial', version: '1' }, { capabilities: {} });
  server.registerTool('gen', { inputSchema: { count: z.number().int() } }, async ({ count }, extra) => {
    const token = extra._meta?.progressToken ?? 't';
    if (kind === 'sluice') {
      const out = partialResults(extra);
      for (let i = 0; i < count; i++) await out.text(WORD);
    } else {
      for (let i = 0; i < count; i++) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: {
            progressToken: token,
            progress: i + 1,
            message: WORD,
            _meta: { 'io.sluice/partial': { seq: i, n: 1 } },
          },
        });
      }
    }
    return { content: [{ type: 'text', text: `sent ${count}` }] };
  });
  return server;
}

async function serveChild(kind: Kind): Promise<void> {
  let port: number;
  if (kind === 'raw') {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d.toString();
      });
      req.on('end', () => {
        const count = (JSON.parse(body) as { count: number }).count;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        let i = 0;
        const pump = (): void => {
          while (i < count) {
            const frame = `id: x.1.${(i + 1).toString(36)}\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":${i + 1},"message":"${WORD}","_meta":{"io.sluice/partial":{"seq":${i},"n":1}}}}\n\n`;
            i++;
            if (!res.write(frame)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end('data: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n');
        };
        pump();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const a = server.address();
    port = typeof a === 'object' && a !== null ? a.port : 0;
  } else {
    const served = await serve({
      createServer: () => tool(kind) as never,
      host: '127.0.0.1',
      port: 0,
      mode: 'sse',
      keepaliveMs: 0,
      metrics: false,
    });
    port = served.port;
  }
  process.on('message', (m) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      process.send?.({ cpuUs: u.user + u.system });
    }
  });
  process.send?.({ port });
}

// ---- client (parent) ---------------------------------------------------------------------------

interface Child {
  proc: ChildProcess;
  port: number;
  cpu(): Promise<number>;
}

function startChild(kind: Kind): Promise<Child> {
  const proc = fork(fileURLToPath(import.meta.url), ['--server', kind], { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('message', (m) => {
      const port = (m as { port: number }).port;
      resolve({
        proc,
        port,
        cpu: () =>
          new Promise((res) => {
            proc.once('message', (x) => res((x as { cpuUs: number }).cpuUs));
            proc.send('cpu');
          }),
      });
    });
  });
}

const mcpUrl = (port: number): string => `http://127.0.0.1:${port}/mcp`;

async function once(kind: Kind, child: Child, count: number, rep: number): Promise<PartialRun> {
  const headers = kind === 'raw' ? BASE_HEADERS : await openSession(mcpUrl(child.port));
  const body =
    kind === 'raw'
      ? JSON.stringify({ count })
      : JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'gen', arguments: { count }, _meta: { progressToken: 't' } },
        });
  let text = 0;
  let deltas = 0;
  let frames = 0;
  let first = 0;
  const parser = createParser({
    onEvent: (e) => {
      if (e.data === '') return;
      const m = JSON.parse(e.data) as {
        params?: { message?: string; _meta?: Record<string, { n: number }> };
      };
      const marker = m.params?._meta?.['io.sluice/partial'];
      if (marker === undefined) return;
      if (first === 0) first = performance.now();
      deltas += marker.n;
      frames++;
      text += m.params?.message?.length ?? 0;
    },
  });
  const cpu0 = await child.cpu();
  const t0 = performance.now();
  await post(mcpUrl(child.port), headers, body, { onData: (d) => parser.feed(d) });
  const t1 = performance.now();
  const cpu1 = await child.cpu();
  if (deltas !== count || text !== count * WORD.length)
    throw new Error(`${kind}: ${deltas} of ${count} deltas, ${text} of ${count * WORD.length} bytes of text`);
  const seconds = (t1 - t0) / 1000;
  return {
    server: kind,
    rep,
    deltas,
    seconds,
    deltasPerSec: deltas / seconds,
    textMBps: text / seconds / 1e6,
    firstFrameMs: first - t0,
    cpuUsPerDelta: (cpu1 - cpu0) / deltas,
    frames,
  };
}

/** Runs section (f): `reps` interleaved repetitions of a `count`-delta flood per server. */
export async function runPartial(
  count: number,
  reps: number,
  log: (line: string) => void,
): Promise<PartialRun[]> {
  const children = new Map<Kind, Child>();
  for (const k of PARTIAL_KINDS) children.set(k, await startChild(k));
  const runs: PartialRun[] = [];
  try {
    for (const k of PARTIAL_KINDS) await once(k, children.get(k) as Child, Math.min(count, 5_000), -1); // warm-up
    for (let rep = 0; rep < reps; rep++) {
      for (let j = 0; j < PARTIAL_KINDS.length; j++) {
        const k = PARTIAL_KINDS[(j + rep) % PARTIAL_KINDS.length] as Kind;
        const r = await once(k, children.get(k) as Child, count, rep);
        log(
          `(f) ${k} rep ${rep}: ${r.deltasPerSec.toFixed(0)} deltas/s, first frame ${r.firstFrameMs.toFixed(1)} ms, ${r.cpuUsPerDelta.toFixed(2)} µs CPU/delta, ${r.frames} frames`,
        );
        runs.push(r);
      }
    }
  } finally {
    for (const c of children.values()) c.proc.kill();
  }
  return runs;
}

/** The section's table (medians over repetitions), with Sluice's share of raw. */
export function renderPartial(runs: PartialRun[]): string {
  if (runs.length === 0) return '';
  const by = (k: Kind) => runs.filter((r) => r.server === k);
  const raw = median(by('raw').map((r) => r.deltasPerSec));
  const rawFirst = median(by('raw').map((r) => r.firstFrameMs));
  let out = '\n## (f) Partial output: one stream of text deltas\n\n';
  out += `${runs[0]?.deltas ?? 0} deltas of "${WORD}" per run; medians of ${by('raw').length} repetitions.\n\n`;
  out += '| server | deltas/s | % of raw | text MB/s | first frame ms | × raw | server CPU µs/delta |\n';
  out += '|---|---:|---:|---:|---:|---:|---:|\n';
  for (const k of PARTIAL_KINDS) {
    const rs = by(k);
    if (rs.length === 0) continue;
    const dps = median(rs.map((r) => r.deltasPerSec));
    const ff = median(rs.map((r) => r.firstFrameMs));
    out += `| ${k} | ${dps.toFixed(0)} | ${((dps / raw) * 100).toFixed(0)} % | ${median(rs.map((r) => r.textMBps)).toFixed(2)} | ${ff.toFixed(1)} | ${(ff / rawFirst).toFixed(1)} | ${median(rs.map((r) => r.cpuUsPerDelta)).toFixed(2)} |\n`;
  }
  return out;
}

const argv = process.argv.slice(2);
if (argv[0] === '--server') void serveChild(argv[1] as Kind);
