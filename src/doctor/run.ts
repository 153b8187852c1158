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
import type { DoctorOptions, DoctorReport, Verdict } from './types.js';

export const DEFAULT_IDLE_SECONDS = 65;

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
    log(`idle: holding a quiet stream open for ${idleSeconds} s`);
    const idle = checkIdle(s, idleSeconds, tools);
    verdicts.push(await checkUnknownSession(s), await checkMethodNotAllowed(s));
    verdicts.push(await idle);
    verdicts.push(checkForwarding(s));
    verdicts.push(await checkDelete(s));
  }
  return { url: o.url, ok: verdicts.every((v) => v.status !== 'fail'), verdicts };
}
