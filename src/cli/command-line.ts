/**
 * Reads one `sluice <command>`'s arguments the way every command does: node:util's `parseArgs`
 * with `-h`/`--help` added, a parse mistake (an unknown option, a missing value) reported as bad
 * usage (exit 2: the reason, one line of usage, where the options are described), and `--help`
 * printing the command's full text on stdout (exit 0). One place, so no command drifts from it.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { oneLine, usageFailure } from './usage-error.js';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

type Parsed<O extends OptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; allowPositionals: true; options: O & typeof HELP_OPTION }>
>;

/** A command's parsed arguments: its options' values (`help` among them) and its positionals. */
export type CommandLine<O extends OptionsConfig> = Omit<Parsed<O>, 'tokens'>;

/**
 * One command as the user meets it: its text and the options its parser accepts. Each command
 * module exports its own, so a test can hold the options against `--help` and the README.
 */
export interface CommandSpec<O extends OptionsConfig> {
  /** The command's name as typed after `sluice`. */
  readonly command: string;
  /** One line of usage, printed under a usage mistake. */
  readonly usageLine: string;
  /** The full text `--help` prints (a trailing newline is added when missing). */
  readonly help: string;
  readonly options: O;
}

/**
 * The parsed arguments, or the exit code when there is nothing left to do: 0 after `--help`,
 * 2 after a usage mistake (already reported on stderr).
 */
export function readCommandLine<const O extends OptionsConfig>(
  spec: CommandSpec<O>,
  argv: string[],
): CommandLine<O> | number {
  let parsed: Parsed<O>;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...spec.options, ...HELP_OPTION } });
  } catch (error) {
    return usageFailure(spec.command, oneLine(error), spec.usageLine);
  }
  if ((parsed.values as { help?: boolean }).help === true) {
    process.stdout.write(spec.help.endsWith('\n') ? spec.help : `${spec.help}\n`);
    return 0;
  }
  return parsed;
}
