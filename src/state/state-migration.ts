// `portcullis state migrate`: moves a gateway's state between the file backend
// (the data directory) and Redis. The source is read, never written; the
// destination must hold nothing yet; after the copy the destination is read
// back and compared with what was read, and its audit chain verified and its
// head compared. See docs/scaling.md, "Moving state between files and Redis".
import type { AuditLog } from '../audit/audit-log.ts';
import type { ChainHead } from '../audit/audit-chain.ts';
import { budgetCountsFromUsage, currentBudgetCounts, firstDifference, snapshotCounts, usageWithinRetention, type SnapshotCounts, type StateSnapshot } from './state-snapshot.ts';

export interface MigrationSide {
  readonly kind: 'file' | 'redis';
  /** For messages: `the data directory /srv/data` or `Redis redis://10.0.0.5:6379/0 (key prefix portcullis:)`. */
  readonly description: string;
  /** What it holds already, as a phrase for the refusal; null when it holds nothing. */
  occupied(): Promise<string | null>;
  /** Signs that a gateway serves on it now; empty when none are seen. */
  servingSigns(nowMs: number): Promise<string[]>;
  /** Its state; budget counts as it keeps them (budgets.json; the budget keys in Redis). */
  read(nowMs: number): Promise<StateSnapshot>;
  auditLines(): AsyncIterable<string[]>;
  readonly audit: AuditLog;
  write(snapshot: StateSnapshot, nowMs: number): Promise<void>;
  auditWriter(): { append(lines: string[]): Promise<void>; finish(head: ChainHead): Promise<void> };
  /** How to empty it again after a copy that failed half way. */
  readonly cleanupAdvice: string;
}

/** Refused before anything was written: the message says why and what to do. */
export class MigrationRefusedError extends Error {
  override name = 'MigrationRefusedError';
}

/** Failed after writing began: the destination holds part of the state. */
export class MigrationFailedError extends Error {
  override name = 'MigrationFailedError';
}

export interface MigrationSummary {
  from: string;
  to: string;
  counts: SnapshotCounts;
  /** Where the budget counts came from: copied as they are, or budgets.json's raised to the usage where that is more. */
  budgets: 'copied' | 'raised-to-usage';
  audit: { records: number; head: ChainHead; trimmed: boolean };
}

function isEmpty(s: StateSnapshot): boolean {
  return s.keys.length === 0 && s.tokens.length === 0 && s.usage.size === 0 && s.lastUsed.size === 0;
}

export async function migrateState(source: MigrationSide, destination: MigrationSide, nowMs: number): Promise<MigrationSummary> {
  if (source.kind === destination.kind) {
    throw new MigrationRefusedError(`the source and the destination are both ${source.kind === 'file' ? 'data directories' : 'Redis'}: state migrate moves state between the file backend and Redis; to copy a data directory, stop the gateway and copy the directory`);
  }
  const serving = await source.servingSigns(nowMs);
  if (serving.length > 0) {
    throw new MigrationRefusedError(`a gateway seems to be serving on ${source.description} (${serving.join('; ')}): stop every gateway that uses it first (systemctl stop portcullis), so nothing changes during the copy; nothing was copied`);
  }
  const found = await destination.occupied();
  if (found !== null) {
    throw new MigrationRefusedError(`${destination.description} already holds ${found}; nothing was copied. Migrate into an empty destination${destination.kind === 'redis' ? ' (another database, or another --key-prefix)' : ' (a new directory: --to file:DIR)'}, or remove what it holds if it is not needed`);
  }
  const read = await source.read(nowMs);
  const verified = await source.audit.verify();
  if (!verified.ok) {
    throw new MigrationRefusedError(`the audit chain of ${source.description} does not verify (${verified.message}); nothing was copied. Run portcullis audit verify and repair the chain first (docs/audit.md)`);
  }
  const open = await source.audit.openSeqs();
  if (open.length > 0) {
    throw new MigrationRefusedError(`the audit chain of ${source.description} has ${open.length} write-ahead record${open.length === 1 ? '' : 's'} whose change is not settled (seq ${open.slice(0, 5).join(', ')}${open.length > 5 ? ', ...' : ''}): a gateway or a command stopped in the middle of a change; nothing was copied. Start the gateway once and stop it (its start settles them, docs/audit.md "Write-ahead"), then migrate`);
  }
  // usage.json is written every few seconds and charges a request when it ends,
  // so it can lag behind budgets.json, or lead it (no budgets.json before the
  // first start that writes one): the larger count of each window moves.
  const budgets = source.kind === 'file' ? 'raised-to-usage' : 'copied';
  const snapshot: StateSnapshot = {
    ...read,
    usage: usageWithinRetention(read.usage, nowMs),
    budgets: currentBudgetCounts(read.budgets, source.kind === 'file' ? budgetCountsFromUsage(read.keys, read.usage, nowMs) : [], nowMs),
  };
  if (isEmpty(snapshot) && verified.count === 0) {
    throw new MigrationRefusedError(`${source.description} holds no keys, admin tokens, usage or audit records: nothing to migrate. Check --config and --data-dir name the gateway's state`);
  }

  try {
    await destination.write(snapshot, nowMs);
    const writer = destination.auditWriter();
    let copied = 0;
    for await (const lines of source.auditLines()) {
      await writer.append(lines);
      copied += lines.length;
    }
    await writer.finish(verified.head);
    if (copied !== verified.count) throw new Error(`${copied} audit records were read but the chain verified ${verified.count}`);

    const copy = await destination.read(nowMs);
    const differs = firstDifference(snapshot, copy);
    if (differs !== null) throw new Error(`the ${differs} read back from ${destination.description} differ from the ones read from ${source.description}`);
    const check = await destination.audit.verify();
    if (!check.ok) throw new Error(`the copied audit chain does not verify: ${check.message}`);
    if (check.count !== verified.count || check.head.seq !== verified.head.seq || check.head.hash !== verified.head.hash) {
      throw new Error(`the copied audit chain ends at seq ${check.head.seq} (${check.count} records) but the source's at seq ${verified.head.seq} (${verified.count} records)`);
    }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new MigrationFailedError(`the copy to ${destination.description} failed: ${why}. The source was not changed; the destination holds part of the state: ${destination.cleanupAdvice}, then run the migration again`, { cause: error });
  }
  return {
    from: source.description,
    to: destination.description,
    counts: snapshotCounts(snapshot),
    budgets,
    audit: { records: verified.count, head: verified.head, trimmed: verified.trimmed },
  };
}
