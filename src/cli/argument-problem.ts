// Our own wording for a command line parseArgs refused, found by re-reading
// its tokens: Node's messages differ between versions and would make the
// CLI's output unstable. Every `portcullis` subcommand reports through here.
import { parseArgs } from 'node:util';
import { didYouMean } from '../config/config-issues.ts';

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

export function describeArgumentProblem(spec: { options: Record<string, { type: 'string' | 'boolean' }>; allowPositionals: boolean }, args: string[], error: unknown): string {
  const { tokens } = parseArgs({ args, options: spec.options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === 'positional' && !spec.allowPositionals) return `unexpected argument '${token.value}'`;
    if (token.kind !== 'option') continue;
    const option = spec.options[token.name];
    if (option === undefined) return unknownArgument(token.rawName, Object.keys(spec.options));
    if (option.type === 'boolean' && token.value !== undefined) return `option '${token.rawName}' does not take a value`;
    if (option.type === 'string' && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))) {
      return `option '${token.rawName}' needs a value (write ${token.rawName}=VALUE for a value starting with '-')`;
    }
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * `unknown option '--nme'; did you mean '--name'?` for a word starting with
 * '-' (`options`: the long names), `unknown command 'lsit'; did you mean 'list'?`
 * otherwise (`commands`). The suggestion is the config checker's for an
 * unknown setting, so a typo reads the same on the command line and in the file.
 */
export function unknownArgument(word: string, options: readonly string[], commands: readonly string[] = []): string {
  if (!word.startsWith('-')) {
    const command = didYouMean(word, commands);
    return `unknown command '${word}'${command === null ? '' : `; did you mean '${command}'?`}`;
  }
  // A short option (-x) is one letter: too short to guess from.
  const name = word.startsWith('--') ? word.slice(2).split('=', 1)[0] ?? '' : '';
  const option = name === '' ? null : didYouMean(name, options);
  return `unknown option '${word}'${option === null ? '' : `; did you mean '--${option}'?`}`;
}

/**
 * A refused command line, as every subcommand reports it: `<command>: <problem>`
 * and where its usage is; exit code 2. `helpFor` is the command whose --help
 * to name (default: the subcommand's own).
 */
export function refuseCommandLine(stderr: NodeJS.WritableStream, command: string, subcommand: string | null, problem: string, helpFor?: string): 2 {
  const named = subcommand === null ? command : `${command} ${subcommand}`;
  stderr.write(`${named}: ${problem}\nRun "${helpFor ?? named} --help" for usage.\n`);
  return 2;
}
