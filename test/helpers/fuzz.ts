/**
 * fast-check's run parameters for the generated-input tests, from the environment:
 * FUZZ_SEED and FUZZ_PATH replay a failure (fast-check prints both), FUZZ_RUNS draws more than the
 * default for a longer hunt (and lifts the time limit to 10 minutes). Without them, `runs` draws,
 * stopped at `timeLimitMs` so that a slow machine runs fewer and never hangs.
 */
import type fc from 'fast-check';

export function fuzzParameters(runs: number, timeLimitMs: number): fc.Parameters<unknown> {
  const env = process.env;
  const hunt = env['FUZZ_RUNS'];
  const seed = env['FUZZ_SEED'];
  const path = env['FUZZ_PATH'];
  return {
    numRuns: hunt === undefined ? runs : Number(hunt),
    interruptAfterTimeLimit: hunt === undefined ? timeLimitMs : 600_000,
    // The failing assertion in the message itself: node's reporter does not print an error's cause.
    includeErrorInReport: true,
    ...(seed === undefined ? {} : { seed: Number(seed) }),
    ...(path === undefined ? {} : { path }),
  };
}

/**
 * Collects what escapes the process while generated inputs run (an uncaught exception, an unhandled
 * rejection): `start()` in `before`, `stop()` in `after`, and the test asserts `escaped` is empty.
 * Listening also keeps one such error from ending the run before the test can name it.
 */
export function catchEscapes(): { readonly escaped: unknown[]; start(): void; stop(): void } {
  const escaped: unknown[] = [];
  const onEscape = (e: unknown): void => {
    escaped.push(e);
  };
  return {
    escaped,
    start() {
      process.on('uncaughtException', onEscape);
      process.on('unhandledRejection', onEscape);
    },
    stop() {
      process.off('uncaughtException', onEscape);
      process.off('unhandledRejection', onEscape);
    },
  };
}
