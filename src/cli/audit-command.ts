// `portcullis audit verify|list`: check the audit chain and read it (docs/audit.md).
// Exit codes: 0 the chain is whole / the records were listed; 1 the chain is
// broken, or the log could not be read (message on stderr); 2 the command line
// is wrong.
import { parseArgs } from 'node:util';
import { describeArgumentProblem, refuseCommandLine } from './argument-problem.ts';
import type { AuditVerification } from '../audit/audit-chain.ts';
import { AUDIT_FILTER_NAMES, AuditFilterError, AuditLogError, parseAuditFilter, type AuditFilterName, type AuditLog } from '../audit/audit-log.ts';
import { canonicalJson, type AuditRecord } from '../audit/audit-record.ts';
import { renderTable } from './keys-output.ts';

export interface AuditCommandContext {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Opens the configured chain (the data directory's file, or Redis); main.ts supplies it. */
  openLog: () => Promise<{ log: AuditLog; close(): Promise<void> }>;
}

export const AUDIT_USAGE = `Usage: portcullis audit <command> [options]

Check and read the audit log: every key change, admin login, password and
token change and config reload, hash-chained (docs/audit.md).

Commands:
  verify [--from-genesis] [--expect-head HASH] [--json]
      Check the whole chain: exit 0 when whole, 1 when a record was edited,
      deleted, reordered or appended past the head, or the log truncated
      (names the file, line and seq).
      --from-genesis   also fail when the oldest records were removed (retention)
      --expect-head    a record hash kept elsewhere that the chain must still
                       contain: the "hash" of the last "audit" or "audit chain
                       head" line of the gateway's log stream (journald), checked
                       from the machine that holds that copy
  list [--key ID] [--actor WHO] [--action ACTION] [--since TIME] [--until TIME]
       [--limit N] [--before SEQ] [--json]
      Records newest first, as a table (with a refusal's reason and what a
      token did) or (--json) one JSON record per line.
      --key: the target key id; --actor: an actor id or name, alone or as
      the table shows it (token:ci); --since (inclusive) and --until
      (exclusive): ISO 8601 times; --limit 1-1000 (default 100);
      --before: only records with a lower seq (continue a listing).
`;

type Values = Record<string, string | boolean | undefined>;

const VERIFY_OPTIONS = { 'from-genesis': { type: 'boolean' }, 'expect-head': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;
const LIST_OPTIONS = {
  key: { type: 'string' },
  actor: { type: 'string' },
  action: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  limit: { type: 'string' },
  before: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function runAuditCommand(args: string[], ctx: AuditCommandContext): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined) return usageError(ctx, null, 'missing command (verify or list)');
  if (name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(AUDIT_USAGE);
    return 0;
  }
  if (name !== 'verify' && name !== 'list') return usageError(ctx, null, `unknown command '${name}' (verify or list)`);
  let values: Values;
  try {
    values = parseArgs({ args: rest, options: name === 'verify' ? VERIFY_OPTIONS : LIST_OPTIONS, strict: true, allowPositionals: false }).values as Values;
  } catch (error) {
    return usageError(ctx, name, describeArgumentProblem({ options: name === 'verify' ? VERIFY_OPTIONS : LIST_OPTIONS, allowPositionals: false }, rest, error));
  }
  if (values['help'] === true) {
    ctx.stdout.write(AUDIT_USAGE);
    return 0;
  }
  if (name === 'verify') {
    const expectHead = values['expect-head'];
    if (typeof expectHead === 'string' && !/^[0-9a-f]{64}$/.test(expectHead)) return usageError(ctx, name, '--expect-head must be a record hash: 64 lowercase hex digits');
    return withLog(ctx, name, async (log) => verify(ctx, log, values, typeof expectHead === 'string' ? expectHead : null));
  }
  let filter;
  try {
    const input: Partial<Record<AuditFilterName, string | undefined>> = {};
    for (const field of AUDIT_FILTER_NAMES) input[field] = values[field] as string | undefined;
    filter = parseAuditFilter(input);
  } catch (error) {
    // The filter's messages begin with the parameter's name ("limit must be ..."): said once, as the option.
    if (error instanceof AuditFilterError) return usageError(ctx, name, error.message.startsWith(`${error.param} `) ? `--${error.message}` : `--${error.param}: ${error.message}`);
    throw error;
  }
  return withLog(ctx, name, async (log) => {
    const page = await log.list(filter);
    if (values['json'] === true) {
      ctx.stdout.write(page.records.map((record) => canonicalJson(record) + '\n').join(''));
    } else {
      ctx.stdout.write(page.records.length === 0 ? 'No audit records match.\n' : renderRecords(page.records));
    }
    if (page.nextBefore !== null) ctx.stderr.write(`portcullis audit list: more records: add --before ${page.nextBefore}\n`);
    return 0;
  });
}

async function verify(ctx: AuditCommandContext, log: AuditLog, values: Values, expectHead: string | null): Promise<number> {
  const result: AuditVerification = await log.verify({ fromGenesis: values['from-genesis'] === true, expectHead });
  if (values['json'] === true) {
    ctx.stdout.write(JSON.stringify({ location: log.location, ...result }) + '\n');
    return result.ok ? 0 : 1;
  }
  if (!result.ok) {
    ctx.stderr.write(`portcullis audit verify: the audit log in ${log.location} is BROKEN (${result.reason}): ${result.message}\n`);
    return 1;
  }
  const span = result.count === 0 ? 'no records yet' : `${result.count} record${result.count === 1 ? '' : 's'}, seq ${result.firstSeq} to ${result.lastSeq}`;
  ctx.stdout.write(`audit log in ${log.location} is whole: ${span}\nhead: ${result.head.hash}\n`);
  if (result.trimmed) ctx.stdout.write(`starts at seq ${result.firstSeq}; earlier records were removed (retention)\n`);
  return 0;
}

function renderRecords(records: readonly AuditRecord[]): string {
  return renderTable(
    ['TIME', 'SEQ', 'ACTOR', 'SOURCE', 'ACTION', 'TARGET', 'DETAIL'],
    records.map((r) => [r.time, String(r.seq), `${r.actor.kind}:${r.actor.name ?? r.actor.id}`, r.source, r.action, r.target ?? '-', detailText(r)]),
  );
}

/**
 * The part of `detail` a reader scans for: why it was refused, what a token did, the setting
 * a refused reload names, who ran sudo, what was redacted (the rest, and before/after, with
 * --json). Terminal controls are
 * shown as "?": a request's path is the client's.
 */
function detailText(record: AuditRecord): string {
  const d = record.detail ?? {};
  const parts: string[] = [];
  if (typeof d['reason'] === 'string') parts.push(d['reason']);
  if (typeof d['method'] === 'string' && typeof d['path'] === 'string') parts.push(`${d['method']} ${d['path']}${typeof d['status'] === 'number' ? ` ${d['status']}` : ''}`);
  else if (typeof d['path'] === 'string') parts.push(`at ${d['path']}`);
  // A minute's reads, counted: "GET /api/keys x12 (200 x11, 404 x1)".
  if (typeof d['method'] === 'string' && typeof d['route'] === 'string' && typeof d['count'] === 'number') {
    const statuses = typeof d['statuses'] === 'object' && d['statuses'] !== null && !Array.isArray(d['statuses']) ? Object.entries(d['statuses']).map(([status, n]) => `${status} x${String(n)}`) : [];
    parts.push(`${d['method']} ${d['route']} x${d['count']}${statuses.length === 0 ? '' : ` (${statuses.join(', ')})`}`);
  }
  // An accepted reload: what changed.
  if (typeof d['changes'] === 'number' && Array.isArray(d['changed'])) parts.push(changedText(d['changes'], d['changed']));
  if (typeof d['sudoUser'] === 'string') parts.push(`sudo by ${d['sudoUser']}`);
  if (Array.isArray(d['redacted'])) parts.push(`redacted: ${d['redacted'].join(', ')}`);
  return parts.length === 0 ? '-' : parts.join('; ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

/** "changed: a, b, c and 4 more", or "nothing changed". */
function changedText(changes: number, changed: readonly unknown[]): string {
  if (changes === 0) return 'nothing changed';
  const shown = changed.slice(0, 3).map(String);
  return `changed: ${shown.join(', ')}${changes > shown.length ? ` and ${changes - shown.length} more` : ''}`;
}

async function withLog(ctx: AuditCommandContext, name: string, work: (log: AuditLog) => Promise<number>): Promise<number> {
  let opened;
  try {
    opened = await ctx.openLog();
  } catch (error) {
    ctx.stderr.write(`portcullis audit ${name}: cannot open the audit log: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  try {
    return await work(opened.log);
  } catch (error) {
    if (!(error instanceof AuditLogError)) throw error;
    ctx.stderr.write(`portcullis audit ${name}: ${error.message}\n`);
    return 1;
  } finally {
    await opened.close();
  }
}

function usageError(ctx: AuditCommandContext, subcommand: string | null, problem: string): number {
  return refuseCommandLine(ctx.stderr, 'portcullis audit', subcommand, problem, 'portcullis audit');
}

