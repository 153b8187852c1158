/**
 * `sluice doctor URL`: diagnoses the network path between a client and any MCP server — buffering,
 * idle timeouts, compression, headers, and the status codes session recovery depends on. One verdict
 * per check with the fix for nginx, AWS ALB and Cloudflare where one applies. Exit code 0 when no
 * check failed, 1 otherwise (2 for usage errors).
 */
import { renderJson, renderText } from '../doctor/report.js';
import { DEFAULT_IDLE_SECONDS, runDoctor } from '../doctor/run.js';
import { readCommandLine } from './command-line.js';
import { connectClient, parseHeaders } from './connect.js';
import { storedAuth } from './credentials.js';
import { endpointUrl } from './hints.js';
import { DOCTOR_COMMAND } from './spec/doctor.js';
import { oneLine, usageFailure } from './usage-error.js';

export async function main(argv: string[]): Promise<number> {
  const line = readCommandLine(DOCTOR_COMMAND, argv);
  if (typeof line === 'number') return line;
  const { values, positionals } = line;
  const url = positionals[0];
  if (url === undefined || positionals.length > 1) {
    return usageFailure('doctor', 'expected exactly one URL', DOCTOR_COMMAND.usageLine);
  }
  try {
    endpointUrl(url);
  } catch (e) {
    return usageFailure('doctor', oneLine(e), DOCTOR_COMMAND.usageLine);
  }
  const idle = Number(values['idle-seconds'] ?? DEFAULT_IDLE_SECONDS);
  if (!Number.isFinite(idle) || idle < 1) {
    return usageFailure('doctor', '--idle-seconds must be a number >= 1', DOCTOR_COMMAND.usageLine);
  }
  let headers: Record<string, string>;
  try {
    headers = parseHeaders(values.header ?? []);
  } catch (e) {
    return usageFailure('doctor', oneLine(e), DOCTOR_COMMAND.usageLine);
  }
  if (headers['authorization'] === undefined) {
    // Credentials from `sluice login`, refreshed first when the stored token no longer works.
    const token = await freshStoredToken(url).catch(() => undefined);
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  }
  const json = values.json === true;
  const quick = values.quick === true;
  // Said up front, on stderr in every mode: the run is mostly one long wait.
  process.stderr.write(
    quick
      ? 'sluice doctor: a few seconds (--quick: the idle check is skipped)\n'
      : `sluice doctor: about ${idle + 2} s: a quiet stream is held ${idle} s to find idle timeouts (--quick skips that)\n`,
  );
  const report = await runDoctor({
    url,
    headers,
    idleSeconds: idle,
    quick,
    idleProgress: (heldSeconds, total) =>
      process.stderr.write(`… idle: ${heldSeconds} s of ${total} s held\n`),
    log: (line) => {
      if (!json) process.stderr.write(`… ${line}\n`);
    },
  });
  process.stdout.write(json ? renderJson(report) : renderText(report));
  return report.ok ? 0 : 1;
}

/**
 * The access token `sluice login` stored for `url`, after one connection through the transport (which refreshes it
 * on a 401); undefined when none is stored.
 */
async function freshStoredToken(url: string): Promise<string | undefined> {
  if (storedAuth(url) === undefined) return undefined;
  const connection = await connectClient(url, {}, {});
  await connection.client.close();
  return (await storedAuth(url)?.tokens())?.access_token;
}
