// `portcullis admin set-password`: sets the dashboard password in <dataDir>/admin.json.
// Exit codes like `keys`: 0 done, 1 refused or failed (message on stderr), 2 the
// command line is wrong. `--config FILE` is consumed by main.ts, which resolves
// ctx.dataDir from it.
//
// The password never appears on the command line (it would show in `ps` and shell
// history). It is read from standard input: at a terminal it is typed twice without
// echo (raw mode, so this process does the line editing); otherwise the first line
// is taken, for scripts and secrets managers.

import { StringDecoder } from 'node:string_decoder';
import { adminFilePath, AdminCredentialsError, readAdminCredentials, setAdminPassword } from '../admin/admin-credentials.ts';
import { checkPasswordStrength, PASSWORD_MAX_LENGTH, passwordHashScheme, type PasswordHashScheme, type Pbkdf2Params, type ScryptParams } from '../admin/password-hash.ts';
import type { AuditTrail } from '../audit/audit-event.ts';
import type { AuditWho } from '../state/audited-key-store.ts';
import { cliWho } from './cli-actor.ts';
import { KeyStoreIoError } from '../keys/errors.ts';
import { runAdminTokensCommand, type TokensBackend } from './admin-tokens-command.ts';
import { unknownArgument, refuseCommandLine } from './argument-problem.ts';

/** Standard input as this command uses it; a TTY stream has isTTY and setRawMode. */
export type PasswordInput = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

interface AdminCommandContext {
  dataDir: string;
  stdin: PasswordInput;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  clock?: () => Date;
  /** The hash new passwords get (security.passwordHash); default scrypt. */
  passwordHash?: PasswordHashScheme;
  /** Tests pass low costs; the defaults are the production strength. */
  scrypt?: ScryptParams;
  pbkdf2?: Pbkdf2Params;
  /** Where a password set is recorded (docs/audit.md, "What each door records"). */
  audit: AuditTrail;
  /** Who acts, as the record names them; default: this process's OS user (cli-actor.ts). */
  who?: AuditWho;
  /** `admin tokens`: opens the configured backend's token store (main.ts). */
  openTokens?: () => Promise<TokensBackend>;
}

export const ADMIN_USAGE = `Usage: portcullis admin <command> [options]

Manage access to the dashboard.

Commands:
  set-password   Set the dashboard admin password (read from standard input)
  tokens         Create, list and revoke admin API tokens (for scripts and CI)

Options:
  -h, --help     Show this help; "portcullis admin <command> --help" for a command
`;

export const SET_PASSWORD_USAGE = `Usage: portcullis admin set-password

Set the password for the dashboard. At a terminal it is asked for twice and
not echoed; otherwise the first line of standard input is the password:
  printf '%s\\n' "$ADMIN_PASSWORD" | portcullis admin set-password
At least 12 characters. Only a hash is stored, in <dataDir>/admin.json: scrypt,
or pbkdf2-sha256 when security.passwordHash says so (docs/crypto.md). A
pbkdf2-sha256 password is replaced by a pbkdf2-sha256 one, whatever the setting.

Running servers check the new password at the next login, without a restart,
and end dashboard sessions opened before the change.

Options:
  -h, --help   Show this help
`;

// Matches admin-server.ts: it reads admin.json on every login and refuses sessions
// created before its updatedAt.
export const PASSWORD_SET_NOTE =
  'Running servers check the new password at the next login; no restart is needed.\n' +
  'Dashboard sessions opened before the change end at their next request: log in again with the new password.\n';

/** Why a pbkdf2-sha256 hash was written although security.passwordHash is "scrypt" (or unset). */
export const PBKDF2_KEPT_NOTE =
  'The password it replaces was a pbkdf2-sha256 hash, so the new one is too: set-password never turns PBKDF2 into scrypt, ' +
  'whatever security.passwordHash says.\n';

/** Bytes read from a non-terminal stdin before giving up on finding a line end: a password is at most 1024 characters. */
const MAX_LINE_BYTES = PASSWORD_MAX_LENGTH * 4 + 2;

const Key = {
  ctrlC: '\u0003',
  ctrlD: '\u0004',
  backspace: '\u0008',
  lineFeed: '\n',
  carriageReturn: '\r',
  ctrlU: '\u0015',
  escape: '\u001b',
  delete: '\u007f',
} as const;

export const LineOutcome = {
  Typing: 'typing',
  Entered: 'entered',
  Cancelled: 'cancelled',
} as const;
export type LineOutcome = (typeof LineOutcome)[keyof typeof LineOutcome];

interface HiddenLine {
  chars: string[];
  outcome: LineOutcome;
  /** Input after the Enter that ended the line (a paste of two lines); empty otherwise. */
  rest: string;
}

/**
 * Line editing for a raw-mode terminal, as a pure step: apply `input` (keys as the
 * terminal sends them) to the characters typed so far. Enter ends the line,
 * Ctrl-C cancels, Ctrl-D cancels an empty line, Backspace/Delete remove the last
 * character, Ctrl-U clears, escape sequences (arrow keys) and other control
 * characters are ignored. At most PASSWORD_MAX_LENGTH + 1 characters are kept, so
 * the strength check can still say the password is too long.
 */
export function feedHiddenLine(chars: readonly string[], input: string): HiddenLine {
  const typed = [...chars];
  const codePoints = [...input];
  for (let i = 0; i < codePoints.length; i++) {
    const key = codePoints[i] as string;
    switch (key) {
      case Key.carriageReturn:
      case Key.lineFeed: {
        let restStart = i + 1;
        // A terminal may send CR LF for one Enter.
        if (key === Key.carriageReturn && codePoints[restStart] === Key.lineFeed) restStart++;
        return { chars: typed, outcome: LineOutcome.Entered, rest: codePoints.slice(restStart).join('') };
      }
      case Key.ctrlC:
        return { chars: [], outcome: LineOutcome.Cancelled, rest: '' };
      case Key.ctrlD:
        if (typed.length === 0) return { chars: [], outcome: LineOutcome.Cancelled, rest: '' };
        break;
      case Key.backspace:
      case Key.delete:
        typed.pop();
        break;
      case Key.ctrlU:
        typed.length = 0;
        break;
      case Key.escape: {
        // CSI (ESC [) and SS3 (ESC O) sequences end at a byte from @ to ~.
        const next = codePoints[i + 1];
        if (next === '[' || next === 'O') {
          i += 2;
          while (i < codePoints.length && !/^[@-~]$/.test(codePoints[i] as string)) i++;
        }
        break;
      }
      default:
        if ((key.codePointAt(0) ?? 0) < 0x20) break;
        if (typed.length <= PASSWORD_MAX_LENGTH) typed.push(key);
    }
  }
  return { chars: typed, outcome: LineOutcome.Typing, rest: '' };
}

/**
 * Reads hidden lines from a terminal the caller has put in raw mode; input left over
 * after one Enter feeds the next line.
 */
function createTerminalReader(input: PasswordInput) {
  let pending = '';
  return {
    read(): Promise<string | null> {
      return new Promise((resolve, reject) => {
        const decoder = new StringDecoder('utf8');
        let line: HiddenLine = { chars: [], outcome: LineOutcome.Typing, rest: '' };
        let listening = false;
        const finish = (): void => {
          if (!listening) return; // answered from input carried over: nothing was set up
          input.removeListener('data', onData);
          input.removeListener('end', onEnd);
          input.removeListener('error', onError);
          input.pause();
        };
        const apply = (text: string): boolean => {
          line = feedHiddenLine(line.chars, text);
          if (line.outcome === LineOutcome.Typing) return false;
          finish();
          pending = line.rest;
          resolve(line.outcome === LineOutcome.Entered ? line.chars.join('') : null);
          return true;
        };
        const onData = (chunk: Buffer | string): void => {
          apply(typeof chunk === 'string' ? chunk : decoder.write(chunk));
        };
        const onEnd = (): void => {
          finish();
          resolve(null);
        };
        const onError = (error: Error): void => {
          finish();
          reject(error);
        };
        const carried = pending;
        pending = '';
        if (carried !== '' && apply(carried)) return;
        listening = true;
        input.on('data', onData);
        input.once('end', onEnd);
        input.once('error', onError);
        input.resume();
      });
    },
  };
}

type LineResult = { kind: 'line'; bytes: Buffer } | { kind: 'empty' } | { kind: 'too_long' };

/** The first line of a non-terminal stdin (without its CR LF or LF), read no further. */
function readFirstLine(input: PasswordInput): Promise<LineResult> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const finish = (result: LineResult): void => {
      input.removeListener('data', onData);
      input.removeListener('end', onEnd);
      input.removeListener('error', onError);
      input.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer | string): void => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      const newline = bytes.indexOf(0x0a);
      chunks.push(newline === -1 ? bytes : bytes.subarray(0, newline));
      total += newline === -1 ? bytes.length : newline;
      if (total > MAX_LINE_BYTES) return finish({ kind: 'too_long' });
      if (newline !== -1) finish(lineOf(Buffer.concat(chunks)));
    };
    const onEnd = (): void => {
      const bytes = Buffer.concat(chunks);
      finish(bytes.length === 0 ? { kind: 'empty' } : lineOf(bytes));
    };
    const onError = (error: Error): void => {
      input.removeListener('data', onData);
      input.removeListener('end', onEnd);
      reject(error);
    };
    input.on('data', onData);
    input.once('end', onEnd);
    input.once('error', onError);
    input.resume();
  });
}

function lineOf(bytes: Buffer): LineResult {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
  return { kind: 'line', bytes: bytes.subarray(0, end) };
}

class PasswordInputProblem extends Error {
  override name = 'PasswordInputProblem';
  readonly exitCode: 1 | 2;
  constructor(message: string, exitCode: 1 | 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

async function passwordFromPipe(input: PasswordInput): Promise<string> {
  const result = await readFirstLine(input);
  if (result.kind === 'empty') {
    throw new PasswordInputProblem('no password on standard input (pipe one line in, or run at a terminal)', 2);
  }
  if (result.kind === 'too_long') {
    throw new PasswordInputProblem(`The password must be at most ${PASSWORD_MAX_LENGTH} characters long.`, 1);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(result.bytes);
  } catch {
    throw new PasswordInputProblem('The password on standard input is not valid UTF-8.', 1);
  }
}

async function passwordFromTerminal(input: PasswordInput, prompts: NodeJS.WritableStream): Promise<string> {
  // Raw mode before the first prompt: keys typed (or pasted) the instant the prompt
  // appears must not be echoed by the terminal's line discipline.
  input.setRawMode?.(true);
  try {
    return await askTwice(createTerminalReader(input), prompts);
  } finally {
    input.setRawMode?.(false);
  }
}

async function askTwice(terminal: ReturnType<typeof createTerminalReader>, prompts: NodeJS.WritableStream): Promise<string> {
  prompts.write('New admin password: ');
  const first = await terminal.read();
  prompts.write('\n');
  if (first === null) throw new PasswordInputProblem('Cancelled; nothing was changed.', 1);
  // Say what is wrong before asking for the same weak password twice.
  const problem = checkPasswordStrength(first);
  if (problem !== null) throw new PasswordInputProblem(problem, 1);
  prompts.write('Repeat the password: ');
  const second = await terminal.read();
  prompts.write('\n');
  if (second === null) throw new PasswordInputProblem('Cancelled; nothing was changed.', 1);
  if (second !== first) throw new PasswordInputProblem('The passwords do not match; nothing was changed.', 1);
  return first;
}

function usageError(ctx: AdminCommandContext, subcommand: string | null, problem: string): number {
  return refuseCommandLine(ctx.stderr, 'portcullis admin', subcommand, problem);
}

async function runSetPassword(args: readonly string[], ctx: AdminCommandContext): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    ctx.stdout.write(SET_PASSWORD_USAGE);
    return 0;
  }
  const [first] = args;
  if (first !== undefined) {
    const problem = first.startsWith('-') ? unknownArgument(first, ['help']) : `unexpected argument '${first}' (the password is read from standard input)`;
    return usageError(ctx, 'set-password', problem);
  }
  if (ctx.dataDir === '') {
    ctx.stderr.write('portcullis admin set-password: no data directory is configured.\n');
    return 1;
  }
  try {
    const password = ctx.stdin.isTTY === true ? await passwordFromTerminal(ctx.stdin, ctx.stderr) : await passwordFromPipe(ctx.stdin);
    // The time of the password it replaces, for the record; an unreadable admin.json is replaced all the same.
    const previous = await readAdminCredentials(ctx.dataDir).catch(() => null);
    const configured = ctx.passwordHash ?? 'scrypt';
    // Never a downgrade: a config without the security section (or another data directory's)
    // must not turn a FIPS deployment's PBKDF2 hash into scrypt, which requireFips then refuses.
    const kept = configured === 'scrypt' && previous !== null && passwordHashScheme(previous.passwordHash) === 'pbkdf2-sha256';
    const scheme: PasswordHashScheme = kept ? 'pbkdf2-sha256' : configured;
    const credentials = await setAdminPassword(ctx.dataDir, password, ctx.clock, {
      scheme,
      ...(ctx.scrypt === undefined ? {} : { scrypt: ctx.scrypt }),
      ...(ctx.pbkdf2 === undefined ? {} : { pbkdf2: ctx.pbkdf2 }),
    });
    const who = ctx.who ?? cliWho(process.env);
    await ctx.audit.record({
      actor: who.actor,
      source: who.source,
      action: 'admin.password_set',
      target: 'admin',
      before: previous === null ? null : { updatedAt: previous.updatedAt },
      after: { updatedAt: credentials.updatedAt },
      ...(who.detail === undefined ? {} : { detail: who.detail }),
    });
    ctx.stdout.write(`Admin password set at ${credentials.updatedAt} (a ${scheme} hash in ${adminFilePath(ctx.dataDir)}).\n` + (kept ? PBKDF2_KEPT_NOTE : '') + PASSWORD_SET_NOTE);
    return 0;
  } catch (error) {
    if (error instanceof PasswordInputProblem) {
      if (error.exitCode === 2) return usageError(ctx, 'set-password', error.message);
      ctx.stderr.write(`portcullis admin set-password: ${error.message}\n`);
      return 1;
    }
    if (error instanceof AdminCredentialsError) {
      ctx.stderr.write(`portcullis admin set-password: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

/** Run `portcullis admin ...`; resolves to the process exit code. */
export async function runAdminCommand(args: readonly string[], ctx: AdminCommandContext): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined) return usageError(ctx, null, 'missing command (set-password or tokens)');
  if (name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(ADMIN_USAGE);
    return 0;
  }
  if (name === 'set-password') return runSetPassword(rest, ctx);
  if (name === 'tokens') {
    const { clock } = ctx;
    const open = ctx.openTokens ?? (() => Promise.reject(new KeyStoreIoError('open', 'the admin token store', new Error('no data directory is configured'))));
    return runAdminTokensCommand(rest, { stdout: ctx.stdout, stderr: ctx.stderr, open, ...(ctx.who === undefined ? {} : { who: ctx.who }), ...(clock === undefined ? {} : { clock: () => clock().getTime() }) });
  }
  return usageError(ctx, null, unknownArgument(name, ['help'], ['set-password', 'tokens']));
}
