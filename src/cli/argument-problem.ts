// Our own wording for a command line parseArgs refused, found by re-reading
// its tokens: Node's messages differ between versions and would make the
// CLI's output unstable. Every `portcullis` subcommand reports through here.
import { parseArgs } from 'node:util';

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

export function describeArgumentProblem(spec: { options: Record<string, { type: 'string' | 'boolean' }>; allowPositionals: boolean }, args: string[], error: unknown): string {
  const { tokens } = parseArgs({ args, options: spec.options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === 'positional' && !spec.allowPositionals) return `unexpected argument '${token.value}'`;
    if (token.kind !== 'option') continue;
    const option = spec.options[token.name];
    if (option === undefined) return `unknown option '${token.rawName}'`;
    if (option.type === 'boolean' && token.value !== undefined) return `option '${token.rawName}' does not take a value`;
    if (option.type === 'string' && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))) {
      return `option '${token.rawName}' needs a value (write ${token.rawName}=VALUE for a value starting with '-')`;
    }
  }
  return error instanceof Error ? error.message : String(error);
}
