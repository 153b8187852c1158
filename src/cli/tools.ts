// Placeholder until this subcommand lands; replaced in this session's work.
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('sluice tools: not built yet\n');
  return 1;
}
