// `portcullis admin tokens create|list|revoke`: admin API tokens for automation
// (docs/admin-api.md, "Tokens"), on the configured state backend (the data
// directory's admin-tokens.json, or Redis), so a running gateway sees a created
// or revoked token at its next request.
// Exit codes as `keys`: 0 done, 1 the store refused or failed (message on stderr),
// 2 the command line is wrong. The token is printed once, by `create`.
import { parseArgs } from 'node:util';
import { describeArgumentProblem, unknownArgument, refuseCommandLine } from './argument-problem.ts';
import type { AuditActor, AuditTrail } from '../audit/audit-event.ts';
import { AuditLogError } from '../audit/audit-log.ts';
import { createAuditTrail } from '../audit/audit-trail.ts';
import type { GatewayConfig } from '../config/config.ts';
import { AdminTokenError, InvalidTokenSettingError } from '../keys/admin-token-errors.ts';
import { adminTokenView, MAX_TOKEN_LIFETIME_DAYS, type AdminTokenView } from '../keys/admin-token.ts';
import { KeyStoreError } from '../keys/errors.ts';
import { FileError } from '../files/errors.ts';
import { createLogger } from '../log/logger.ts';
import type { AdminTokenStore } from '../state/admin-token-store-port.ts';
import type { AuditWho } from '../state/audited-key-store.ts';
import { auditedTokenStore } from '../state/audited-token-store.ts';
import { openStateBackend } from '../state/open-backend.ts';
import { cliWho } from './cli-actor.ts';
import { cliAuditLogger, NOT_RECORDED } from './cli-audit.ts';
import { shortTime } from './keys-output.ts';

/** The token store and the audit trail a tokens command works with; closed when it is done. */
export interface TokensBackend {
  tokens: AdminTokenStore;
  audit: AuditTrail;
  close(): Promise<void>;
}

export interface AdminTokensContext {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Opens the configured backend (main.ts: the data directory or Redis). */
  open: () => Promise<TokensBackend>;
  /** Milliseconds since the epoch (tests pin it). */
  clock?: () => number;
  /** Who runs the command (tests pin it); default the OS user. */
  actor?: AuditActor;
  /** Who runs the command with source and detail (main.ts passes cliWho's); wins over `actor`. */
  who?: AuditWho;
}

const DEFAULT_TOKEN_LIFETIME = '30d';
const DAY_MS = 86_400_000;

export const TOKENS_USAGE = `Usage: portcullis admin tokens <command> [options]

Admin API tokens let scripts and CI call the admin API with
"Authorization: Bearer pca_..." instead of a dashboard session.

Commands:
  create   Create a token (printed once)
  list     List tokens (never the tokens themselves)
  revoke   Revoke a token; running servers refuse it from their next request

Options:
  -h, --help   Show this help; "portcullis admin tokens <command> --help" for a command
`;

export const TOKENS_CREATE_USAGE = `Usage: portcullis admin tokens create --name NAME --scope SCOPE [--scope SCOPE] [--expires WHEN] [--json]

Create an admin API token. It is printed once; only its SHA-256 is stored.

Options:
  --name NAME      A label for people (1 to 64 characters), e.g. "ci-deploy"
  --scope SCOPE    read: every GET of the admin API (keys, usage, aliases, audit)
                   keys: read, and create, update, rotate and revoke API keys
                   (repeat the option or write read,keys for both)
  --expires WHEN   30d (days from now, 1 to ${MAX_TOKEN_LIFETIME_DAYS}), a date 2027-01-31 (00:00 UTC)
                   or an ISO 8601 time with a zone; default ${DEFAULT_TOKEN_LIFETIME}, at most ${MAX_TOKEN_LIFETIME_DAYS} days
  --json           Print the token and its record as JSON
  -h, --help       Show this help
`;

const TOKENS_LIST_USAGE = `Usage: portcullis admin tokens list [--json]

List admin API tokens: id, name, prefix, scopes, status, expiry, who made them.

Options:
  --json       Print JSON
  -h, --help   Show this help
`;

const TOKENS_REVOKE_USAGE = `Usage: portcullis admin tokens revoke ID [--json]

Revoke an admin API token (ids look like tok_...; see "portcullis admin tokens list").
Running servers refuse it from their next request.

Options:
  --json       Print the revoked token as JSON
  -h, --help   Show this help
`;

type Values = Record<string, string | boolean | string[] | undefined>;

interface Subcommand {
  usage: string;
  options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;
  allowPositionals: boolean;
  run(backend: TokensBackend, values: Values, positionals: string[], ctx: AdminTokensContext): Promise<number>;
}

class TokenOptionError extends Error {
  override name = 'TokenOptionError';
}

/** Who the records name: the OS user (and the sudo user), as every CLI record does (cli-actor.ts). */
function whoOf(ctx: AdminTokensContext): AuditWho {
  if (ctx.who !== undefined) return ctx.who;
  return ctx.actor === undefined ? cliWho(process.env) : { actor: ctx.actor, source: 'cli' };
}

/** `30d`, `2027-01-31` or an ISO time with a zone, as the ISO time the store checks. */
export function expiryFromFlag(value: string, nowMs: number): string {
  const days = /^(\d{1,4})d$/.exec(value);
  if (days !== null) {
    const n = Number(days[1]);
    if (n < 1 || n > MAX_TOKEN_LIFETIME_DAYS) throw new TokenOptionError(`--expires ${value}: the number of days must be 1 to ${MAX_TOKEN_LIFETIME_DAYS}`);
    return new Date(nowMs + n * DAY_MS).toISOString();
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T00:00:00.000Z`;
  return value;
}

function scopesFromFlags(values: string[] | undefined): string[] {
  if (values === undefined || values.length === 0) throw new TokenOptionError("missing required option '--scope read|keys'");
  return values.flatMap((v) => v.split(',')).map((s) => s.trim());
}

function describeToken(view: AdminTokenView): string {
  return (
    `id:         ${view.id}\n` +
    `name:       ${view.name}\n` +
    `prefix:     ${view.prefix}\n` +
    `scopes:     ${view.scopes.join(', ')}\n` +
    `status:     ${view.status}\n` +
    `created:    ${view.createdAt} by ${view.createdBy}\n` +
    `expires:    ${view.expiresAt}\n` +
    (view.revokedAt === null ? '' : `revoked:    ${view.revokedAt}\n`)
  );
}

function renderTokenTable(views: AdminTokenView[]): string {
  if (views.length === 0) return 'No admin API tokens. Create one with "portcullis admin tokens create --name NAME --scope read".\n';
  const rows = [['ID', 'NAME', 'PREFIX', 'SCOPES', 'STATUS', 'EXPIRES', 'CREATED BY']];
  for (const v of views) rows.push([v.id, v.name, v.prefix, v.scopes.join(','), v.status, shortTime(v.expiresAt), v.createdBy]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...(r[i] ?? '')].length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - [...cell].length))).join('  ')).join('\n') + '\n';
}

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;
const JSON_OPTION = { json: { type: 'boolean' } } as const;

const SUBCOMMANDS: Record<string, Subcommand> = {
  create: {
    usage: TOKENS_CREATE_USAGE,
    options: { ...HELP_OPTION, ...JSON_OPTION, name: { type: 'string' }, scope: { type: 'string', multiple: true }, expires: { type: 'string' } },
    allowPositionals: false,
    async run(backend, values, _positionals, ctx) {
      const name = values['name'];
      if (typeof name !== 'string') throw new TokenOptionError("missing required option '--name NAME'");
      const scopes = scopesFromFlags(values['scope'] as string[] | undefined);
      const now = (ctx.clock ?? Date.now)();
      const expires = typeof values['expires'] === 'string' ? values['expires'] : DEFAULT_TOKEN_LIFETIME;
      const who = whoOf(ctx);
      const { token, record } = await auditedTokenStore(backend.tokens, backend.audit, who).create({ name, scopes, expiresAt: expiryFromFlag(expires, now), createdBy: `cli:${who.actor.id}` }, now);
      const view = adminTokenView(record, now);
      if (values['json'] === true) {
        ctx.stdout.write(JSON.stringify({ ...view, token }, null, 2) + '\n');
        return 0;
      }
      ctx.stdout.write(
        'Admin API token created. Copy it now: it cannot be shown again.\n\n' +
          `  ${token}\n\n` +
          describeToken(view) +
          '\n' +
          `Anyone holding it can ${record.scopes.includes('keys') ? 'read and change API keys' : 'read the admin API'} until it expires or is revoked;\n` +
          'keep it in a secret store. Send it as "Authorization: Bearer <token>" to the admin listener.\n',
      );
      return 0;
    },
  },
  list: {
    usage: TOKENS_LIST_USAGE,
    options: { ...HELP_OPTION, ...JSON_OPTION },
    allowPositionals: false,
    async run(backend, values, _positionals, ctx) {
      const now = (ctx.clock ?? Date.now)();
      const views = (await backend.tokens.list()).map((r) => adminTokenView(r, now));
      ctx.stdout.write(values['json'] === true ? JSON.stringify(views, null, 2) + '\n' : renderTokenTable(views));
      return 0;
    },
  },
  revoke: {
    usage: TOKENS_REVOKE_USAGE,
    options: { ...HELP_OPTION, ...JSON_OPTION },
    allowPositionals: true,
    async run(backend, values, positionals, ctx) {
      const [id, extra] = positionals;
      if (id === undefined) throw new TokenOptionError('missing token ID');
      if (extra !== undefined) throw new TokenOptionError(`expected one token ID, got ${positionals.length}`);
      const now = (ctx.clock ?? Date.now)();
      const revoked = await auditedTokenStore(backend.tokens, backend.audit, whoOf(ctx)).revoke(id, now);
      const view = adminTokenView(revoked, now);
      ctx.stdout.write(
        values['json'] === true
          ? JSON.stringify(view, null, 2) + '\n'
          : `Revoked admin API token ${view.id} ("${view.name}", prefix ${view.prefix}).\nRunning servers refuse it from their next request.\n`,
      );
      return 0;
    },
  },
};

function usageError(ctx: AdminTokensContext, subcommand: string | null, problem: string): number {
  return refuseCommandLine(ctx.stderr, 'portcullis admin tokens', subcommand, problem);
}

/** Run `portcullis admin tokens ...`; resolves to the process exit code. */
export async function runAdminTokensCommand(args: readonly string[], ctx: AdminTokensContext): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined) return usageError(ctx, null, 'missing command (create, list or revoke)');
  if (name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(TOKENS_USAGE);
    return 0;
  }
  const subcommand = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  if (subcommand === undefined) return usageError(ctx, null, unknownArgument(name, ['help'], Object.keys(SUBCOMMANDS)));
  if (rest.includes('--help') || rest.includes('-h')) {
    ctx.stdout.write(subcommand.usage);
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: subcommand.options, strict: true, allowPositionals: subcommand.allowPositionals });
  } catch (error) {
    return usageError(ctx, name, describeArgumentProblem(subcommand, rest, error));
  }
  let backend: TokensBackend | null = null;
  try {
    backend = await ctx.open();
    return await subcommand.run(backend, parsed.values as Values, parsed.positionals, ctx);
  } catch (error) {
    if (error instanceof TokenOptionError) return usageError(ctx, name, error.message);
    if (error instanceof InvalidTokenSettingError) return usageError(ctx, name, tokenSettingInFlagWords(error, parsed.values as Values));
    if (error instanceof AdminTokenError || error instanceof KeyStoreError || error instanceof FileError) {
      ctx.stderr.write(`portcullis admin tokens ${name}: ${error.message}\n`);
      return 1;
    }
    if (error instanceof AuditLogError) {
      ctx.stderr.write(`portcullis admin tokens ${name}: the change was not made, because its audit record could not be written: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await backend?.close();
  }
}

/** A setting error in the words of the command line; for --expires, with the value given and the forms it takes. */
function tokenSettingInFlagWords(error: InvalidTokenSettingError, values: Values): string {
  if (error.param === 'expiresAt') {
    const given = typeof values['expires'] === 'string' ? `--expires ${values['expires']}` : `--expires (default ${DEFAULT_TOKEN_LIFETIME})`;
    const problem = error.problem.startsWith('must be an ISO 8601 time')
      ? `must be a number of days (30d), a date (2027-01-31, 00:00 UTC) or an ISO 8601 time with a zone (2027-01-31T00:00:00Z)`
      : error.problem;
    return `${given}: ${problem}`;
  }
  const flag = error.param.startsWith('scopes') ? '--scope' : error.param === 'name' ? '--name' : error.param;
  return `${flag}: ${error.problem}`;
}

/**
 * The configured backend's token store, as main.ts opens it for `admin tokens`
 * (files or Redis, like `keys`), with the audit trail CLI changes are recorded on.
 */
export async function openCliTokensBackend(config: GatewayConfig, env: NodeJS.ProcessEnv, stderr: NodeJS.WritableStream): Promise<TokensBackend> {
  const logger = createLogger({ level: 'warn', write: (line) => stderr.write(line) });
  const state = await openStateBackend(config, { logger, env, watch: false });
  const audit = createAuditTrail({ logger: cliAuditLogger(stderr), log: state.audit, onAppendFailure: (changeMade) => changeMade && stderr.write(NOT_RECORDED) });
  return { tokens: state.tokens, audit, close: () => state.close() };
}
