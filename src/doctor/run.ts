/**
 * The doctor's sequence: initialize; the streaming probe (buffering, headers, compression); then the
 * idle stream held open for N seconds while the status-code checks run beside it; DELETE last.
 */
import { checkForwarding } from './check-forwarding.js';
import { checkIdle } from './check-idle.js';
import { checkInitialize } from './check-initialize.js';
import { checkDelete, checkMethodNotAllowed, checkUnknownSession } from './check-status.js';
import { checkStreaming } from './check-streaming.js';
import { McpSession } from './session.js';
import { listTools } from './tools.js';
import { DEFAULT_IDLE_SECONDS, type DoctorOptions, type DoctorReport, type Verdict } from './types.js';

export { DEFAULT_IDLE_SECONDS };

export const QUICK_IDLE_SKIP =
  'skipped (--quick): no quiet stream was held, so idle timeouts on the path (ALB 60 s, Cloudflare ~100 s, nginx proxy_read_timeout 60 s) are not known';

/** Reports the seconds held every few seconds (about ten reports per hold, at most one per second, at least every 10 s). */
function held<T>(
  p: Promise<T>,
  total: number,
  progress: ((held: number, total: number) => void) | undefined,
): Promise<T> {
  if (progress === undefined) return p;
  const every = Math.max(1, Math.min(10, Math.round(total / 10)));
  const start = Date.now();
  const timer = setInterval(() => {
    const s = Math.round((Date.now() - start) / 1000);
    if (s < total) progress(s, total);
  }, every * 1000);
  timer.unref();
  return p.finally(() => clearInterval(timer));
}

export async function runDoctor(o: DoctorOptions): Promise<DoctorReport> {
  const log = o.log ?? (() => undefined);
  const idleSeconds = o.idleSeconds ?? DEFAULT_IDLE_SECONDS;
  const s = new McpSession(o.url, { headers: o.headers ?? {} });
  const verdicts: Verdict[] = [];
  log(`initialize ${o.url}`);
  const init = await checkInitialize(s);
  verdicts.push(init);
  if (init.status !== 'fail') {
    const tools = await listTools(s);
    const streaming = await checkStreaming(s, tools, log);
    verdicts.push(streaming.buffering, streaming.headers, streaming.compression);
    if (o.quick === true) {
      verdicts.push(await checkUnknownSession(s), await checkMethodNotAllowed(s));
      verdicts.push({ id: 'idle', status: 'skip', reason: QUICK_IDLE_SKIP });
    } else {
      log(`idle: holding a quiet stream open for ${idleSeconds} s`);
      const idle = held(checkIdle(s, idleSeconds, tools), idleSeconds, o.idleProgress);
      verdicts.push(await checkUnknownSession(s), await checkMethodNotAllowed(s));
      verdicts.push(await idle);
    }
    verdicts.push(checkForwarding(s));
    verdicts.push(await checkDelete(s));
  }
  return { url: o.url, ok: verdicts.every((v) => v.status !== 'fail'), verdicts };
}
