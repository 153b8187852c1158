// One `sluice conformance-client` scenario run, for both eras (conformance-client.ts and
// conformance-client-modern.ts): connect, run the scenario, close, under a watchdog. The suite kills
// only the shell it spawned us through when its own timeout passes, so a hang here would hang the
// suite: give up first, and say what was still open.
import type { StreamableHttpClientTransport } from '../client/index.js';

/** The part of either SDK's `Client` a run uses. */
interface ScenarioClient {
  connect(transport: StreamableHttpClientTransport): Promise<void>;
  close(): Promise<void>;
}

/** Resolves to the process exit code: 0 when the scenario passed, 1 when it threw. */
export async function runScenario(
  name: string,
  watchdogMs: number,
  client: ScenarioClient,
  transport: StreamableHttpClientTransport,
  scenario: () => Promise<void>,
): Promise<number> {
  const watchdog = setTimeout(() => {
    const open = transport.inspect();
    const pending = open.pendingRequestIds.map(String).join(', ') || 'none';
    process.stderr.write(
      `conformance-client ${name}: still running after ${watchdogMs} ms; pending requests: ${pending}; ` +
        `HTTP requests in flight: ${open.httpRequestsInFlight}; session: ${open.sessionId ?? 'none'}\n`,
    );
    process.exit(1);
  }, watchdogMs);
  watchdog.unref();
  try {
    await client.connect(transport);
    await scenario();
    return 0;
  } catch (error) {
    process.stderr.write(
      `conformance-client ${name}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  } finally {
    await client.close().catch(() => {});
    clearTimeout(watchdog);
  }
}
