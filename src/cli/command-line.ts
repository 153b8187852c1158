/**
 * Reads one `sluice <command>`'s arguments the way every command does: node:util's `parseArgs`
 * with `-h`/`--help` added, a parse mistake (an unknown option, a missing value) reported as bad
 * usage (exit 2: the reason, one line of usage, where the options are described), and `--help`
 * printing the command's full text on stdout (exit 0). One place, so no command drifts from it.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { closest } from './near-miss.js';
import { oneLine, usageFailure } from './usage-error.js';

export type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

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
    return usageFailure(spec.command, parseMistake(error, Object.keys(spec.options)), spec.usageLine);
  }
  if ((parsed.values as { help?: boolean }).help === true) {
    process.stdout.write(spec.help.endsWith('\n') ? spec.help : `${spec.help}\n`);
    return 0;
  }
  return parsed;
}

/**
 * A parseArgs mistake in one line. For an unknown option, node's own text goes on to explain how to
 * pass a positional that starts with '-', which is never what a user who typed '--prot' meant: the
 * option is named with the nearest one the command has ('did you mean --port?') instead.
 */
function parseMistake(error: unknown, names: readonly string[]): string {
  const code = (error as { code?: unknown } | null)?.code;
  const typed = /^Unknown option '([^']+)'/.exec(error instanceof Error ? error.message : '')?.[1];
  if (code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || typed === undefined) return oneLine(error);
  const near = typed.startsWith('--') ? closest(typed.slice(2), [...names, 'help']) : undefined;
  return near === undefined
    ? `Unknown option '${typed}'`
    : `Unknown option '${typed}'; did you mean '--${near}'?`;
}
