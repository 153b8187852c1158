/** A command-line mistake: the command prints it with its usage and exits 2. */
export class UsageError extends Error {}
