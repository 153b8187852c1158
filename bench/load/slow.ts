// Workload (d): a slow consumer. A raw `net` socket sends tools/call flood (4 KiB events, no
// end in sight) and is paused at once, so the client never reads. Every second the server's
// RSS, CPU (from /proc), retained memory (heapUsed + external + arrayBuffers after a forced GC,
// over IPC) and the kernel's queued bytes for the port are sampled. Then the client
// disconnects and the server's CPU is watched for a few more seconds. A server with
// backpressure stays flat while paused and idles once the client is gone.
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import { readTcpQueuedBytes } from '../proc.js';
import type { ServerProcess } from '../servers/launch.js';
import { slope } from '../stats.js';
import { openSession, type Session, toolCallBody } from '../wire.js';

export interface SlowParams {
  /** How long the client does not read. */
  pauseMs: number;
  /** How long CPU is watched after the client disconnects. */
  afterMs: number;
  /** Bytes of `message` in each progress event. */
  payloadBytes: number;
  /** Events asked for; far more than fit in the window, so the tool is still sending at the end. */
  count: number;
  /** flood's `yieldEvery` (see servers/tools.ts). */
  yieldEvery: number;
}

export interface SlowSample {
  /** Seconds since the request was sent. */
  t: number;
  phase: 'paused' | 'closed';
  rssMb: number;
  /** After GC; NaN when the child did not answer in time (or in the closed phase, see below). */
  retainedMb: number;
  cores: number;
  kernelKib: number;
}

export interface SlowResult {
  ok: boolean;
  error?: string;
  samples: SlowSample[];
  retainedBeforeMb: number;
  retainedPausedEndMb: number;
  retainedAfterMb: number;
  /** Least-squares slope of retained memory over the second half of the pause. */
  growthMbPerSec: number;
  rssPeakMb: number;
  coresPaused: number;
  coresAfterClose: number;
}

const MB = 1024 * 1024;
const SAMPLE_MS = 1_000;
/** Two full GCs of a few hundred MB on a busy 2-core machine can take seconds. */
const GC_TIMEOUT_MS = 5_000;

function retained(mem: { heapUsed: number; external: number; arrayBuffers: number }): number {
  // arrayBuffers is part of external in Node's accounting, but V8 reports it separately and the
  // baseline adds both; kept identical so the numbers compare.
  return (mem.heapUsed + mem.external + mem.arrayBuffers) / MB;
}

async function retainedOrNaN(server: ServerProcess): Promise<number> {
  try {
    return retained((await server.gc(GC_TIMEOUT_MS)).mem);
  } catch {
    return Number.NaN; // A child too busy to answer is itself the finding; the sample shows NaN.
  }
}

function sendRequest(server: ServerProcess, session: Session, p: SlowParams): Promise<Socket> {
  const url = new URL(server.url);
  const body = toolCallBody(
    1,
    'flood',
    `{"count":${p.count},"payloadBytes":${p.payloadBytes},"yieldEvery":${p.yieldEvery}}`,
    1,
  );
  let head = `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  for (const [k, v] of Object.entries(session.headers)) head += `${k}: ${v}\r\n`;
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => {
      socket.off('error', reject);
      socket.pause();
      socket.write(`${head}\r\n${body}`);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Resumes the paused socket for its oldest chunk: the response head and the first events. */
function firstChunk(socket: Socket, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(''), timeoutMs);
    socket.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      socket.pause();
      resolve(chunk.toString('latin1', 0, Math.min(chunk.length, 4096)));
    });
    socket.resume();
  });
}

export async function runSlow(server: ServerProcess, p: SlowParams): Promise<SlowResult> {
  const url = new URL(server.url);
  const pool = new Pool(url.origin, { connections: 1 });
  let session: Session;
  try {
    session = await openSession(pool, url.pathname);
  } finally {
    await pool.close();
  }
  const retainedBeforeMb = await retainedOrNaN(server);
  const socket = await sendRequest(server, session, p);
  socket.on('error', () => undefined); // The server may reset the connection; samples show it.
  const t0 = performance.now();
  const samples: SlowSample[] = [];

  // CPU intervals start after the previous GC request, so forced GCs are not counted as load.
  const sample = async (phase: SlowSample['phase'], withGc: boolean): Promise<void> => {
    const cpu0 = server.procCpuUs();
    const w0 = performance.now();
    await delay(SAMPLE_MS);
    const cores = (server.procCpuUs() - cpu0) / ((performance.now() - w0) * 1000);
    const rssMb = server.rss() / MB;
    const kernelKib = readTcpQueuedBytes(server.port) / 1024;
    const retainedMb = withGc ? await retainedOrNaN(server) : Number.NaN;
    samples.push({ t: (performance.now() - t0) / 1000, phase, rssMb, retainedMb, cores, kernelKib });
  };

  while (performance.now() - t0 < p.pauseMs - SAMPLE_MS / 2) await sample('paused', true);
  const head = await firstChunk(socket, 2_000);
  socket.destroy();
  const closedAt = performance.now();
  while (performance.now() - closedAt < p.afterMs - SAMPLE_MS / 2) await sample('closed', false);
  const retainedAfterMb = await retainedOrNaN(server);

  let error: string | undefined;
  if (!head.startsWith('HTTP/1.1 200')) error = `slow: response began ${JSON.stringify(head.slice(0, 80))}`;
  else if (!head.includes('notifications/progress')) error = 'slow: no progress event in the first chunk';

  const paused = samples.filter((s) => s.phase === 'paused');
  const closed = samples.filter((s) => s.phase === 'closed');
  const secondHalf = paused.filter((s) => s.t >= p.pauseMs / 2000 && Number.isFinite(s.retainedMb));
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return {
    ok: error === undefined,
    ...(error === undefined ? {} : { error }),
    samples,
    retainedBeforeMb,
    retainedPausedEndMb: paused.at(-1)?.retainedMb ?? Number.NaN,
    retainedAfterMb,
    growthMbPerSec: slope(secondHalf.map((s) => ({ x: s.t, y: s.retainedMb }))),
    rssPeakMb: Math.max(...samples.map((s) => s.rssMb)),
    coresPaused: mean(paused.map((s) => s.cores)),
    coresAfterClose: mean(closed.map((s) => s.cores)),
  };
}
