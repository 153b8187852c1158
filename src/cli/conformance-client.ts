// Placeholder until this subcommand lands; replaced in this session's work.
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('sluice conformance-client: not built yet\n');
  return 1;
}
