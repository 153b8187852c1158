/** A command-line mistake: the command prints it with one line of usage and exits 2. */
export class UsageError extends Error {}

/**
 * Reports bad usage the way every `sluice` command does: the reason, one line of usage and where the options
 * are described, on stderr (the full text is `sluice <command> --help`, on stdout). Returns the exit code, 2.
 */
export function usageFailure(command: string, reason: string, usageLine: string): number {
  process.stderr.write(
    `sluice ${command}: ${reason}\n${usageLine}\nrun 'sluice ${command} --help' for the options\n`,
  );
  return 2;
}

/** One line of an error's message (parseArgs and JSON.parse messages may span lines). */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim();
}
