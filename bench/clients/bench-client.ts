// What workload (e) asks of a client: one checked echo, one checked flood. Implemented by
// undici-client.ts (the floor) and mcp-client.ts (SDK Client over the SDK's or Sluice's
// transport).

export type ClientKind = 'undici' | 'sdk' | 'sluice';

export interface BenchClient {
  /** tools/call echo; throws if the result is not the text sent. */
  echo(id: number): Promise<void>;
  /** tools/call flood with a progress token; resolves with the number of progress events seen. */
  flood(id: number, count: number): Promise<number>;
  close(): Promise<void>;
}
