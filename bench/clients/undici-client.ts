// The floor for workload (e): hand-written requests on an undici Pool (one keep-alive
// connection), the same checks as the load client (wire.ts), and every progress event parsed
// (JSON.parse and an ordering check), as any client that hands events to an application must.
import { Pool } from 'undici';
import { callEcho, callFlood, closeSession, openSession } from '../wire.js';
import type { BenchClient } from './bench-client.js';

export async function connectUndiciClient(url: string, timeoutMs: number): Promise<BenchClient> {
  const { origin, pathname } = new URL(url);
  const pool = new Pool(origin, { connections: 1, pipelining: 1, bodyTimeout: timeoutMs });
  const session = await openSession(pool, pathname);
  return {
    async echo(id) {
      const problem = await callEcho(pool, pathname, session, id);
      if (problem !== undefined) throw new Error(problem);
    },
    async flood(id, count) {
      const call = await callFlood(
        pool,
        pathname,
        session,
        id,
        count,
        0,
        AbortSignal.timeout(timeoutMs),
        true,
      );
      if (call.problem !== undefined) throw new Error(call.problem);
      return call.scanner.progress;
    },
    async close() {
      await closeSession(pool, pathname, session);
      await pool.close();
    },
  };
}
