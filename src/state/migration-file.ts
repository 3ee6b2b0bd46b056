// The data directory's side of `portcullis state migrate`: what it holds, read
// into a StateSnapshot without changing anything (no lock, no repair: the
// gateway is stopped), and a snapshot written into an empty directory in the
// formats the file backend reads (docs/keys.md, docs/audit.md).
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { AUDIT_FILE, AUDIT_HEAD_FILE } from '../audit/file-audit-log.ts';
import { forEachLine } from '../audit/audit-file-lines.ts';
import { headJson } from '../audit/audit-head.ts';
import type { ChainHead } from '../audit/audit-chain.ts';
import { PRIVATE_FILE_MODE, syncDirectory, writeFileAtomic } from '../files/atomic-file.ts';
import { parseTokenFile, serializeTokenFile } from '../keys/admin-token-file.ts';
import { parseKeysFile, parseLastUsedFile, serializeKeysFile, serializeLastUsedFile } from '../keys/store-format.ts';
import { parseUsageFile, serializeUsageFile, USAGE_FILE } from '../usage/usage-file.ts';
import { parseBudgetJournal, serializeBudgetJournal } from '../limits/budget-journal.ts';
import { ADMIN_TOKENS_FILE_NAME } from './file-admin-token-store.ts';
import { BUDGET_FILE } from './budget-file.ts';
import { KEYS_FILE_NAME, LAST_USED_FILE_NAME } from './file-key-store.ts';
import { byCreation, sortBudgets, type StateSnapshot } from './state-snapshot.ts';

/** audit.<first seq, 12 digits>.jsonl: a rotated audit file (file-audit-log.ts, rotatedName). */
const ROTATED_AUDIT_FILE = /^audit\.(\d{12})\.jsonl$/;
/** Lines handed to the destination at a time. */
const AUDIT_BATCH = 500;

/** The names of the state files in `dataDir` (rotated audit files as one entry); empty when there are none or no directory. */
export async function stateFilesIn(dataDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const state = [KEYS_FILE_NAME, LAST_USED_FILE_NAME, ADMIN_TOKENS_FILE_NAME, USAGE_FILE, BUDGET_FILE, AUDIT_FILE, AUDIT_HEAD_FILE].filter((name) => names.includes(name));
  const rotated = names.filter((name) => ROTATED_AUDIT_FILE.test(name)).length;
  if (rotated > 0) state.push(rotated === 1 ? 'a rotated audit file' : `${rotated} rotated audit files`);
  return state;
}

async function readIfThere(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Everything but the audit chain, as the stores would read it (budgets.json whole, ended windows too); the files' own errors (naming file and field) otherwise. */
export async function readFileState(dataDir: string): Promise<StateSnapshot> {
  const at = (name: string) => path.join(dataDir, name);
  const keysText = await readIfThere(at(KEYS_FILE_NAME));
  const lastUsedText = await readIfThere(at(LAST_USED_FILE_NAME));
  const tokensText = await readIfThere(at(ADMIN_TOKENS_FILE_NAME));
  const usageText = await readIfThere(at(USAGE_FILE));
  const budgetsText = await readIfThere(at(BUDGET_FILE));
  return {
    keys: byCreation(keysText === null ? [] : parseKeysFile(keysText, at(KEYS_FILE_NAME))),
    lastUsed: lastUsedText === null ? new Map() : parseLastUsedFile(lastUsedText, at(LAST_USED_FILE_NAME)),
    tokens: byCreation(tokensText === null ? [] : parseTokenFile(tokensText, at(ADMIN_TOKENS_FILE_NAME))),
    usage: usageText === null ? new Map() : parseUsageFile(usageText, at(USAGE_FILE)),
    budgets: budgetsText === null ? [] : sortBudgets(parseBudgetJournal(budgetsText, at(BUDGET_FILE))),
  };
}

/** The chain's lines, oldest first (rotated files by first seq, then audit.jsonl), in batches. A last line without its newline is left out: it was never acknowledged. */
export async function* fileAuditLines(dataDir: string): AsyncGenerator<string[]> {
  let names: string[];
  try {
    names = await readdir(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const files = names
    .map((name) => ({ name, match: ROTATED_AUDIT_FILE.exec(name) }))
    .filter((entry) => entry.match !== null)
    .sort((a, b) => Number((a.match as RegExpExecArray)[1]) - Number((b.match as RegExpExecArray)[1]))
    .map((entry) => entry.name);
  if (names.includes(AUDIT_FILE)) files.push(AUDIT_FILE);
  for (const name of files) {
    const handle = await open(path.join(dataDir, name), 'r');
    const lines: string[] = [];
    try {
      await forEachLine(handle, (text, _line, terminated) => {
        if (terminated) lines.push(text);
        return true;
      });
    } finally {
      await handle.close();
    }
    for (let i = 0; i < lines.length; i += AUDIT_BATCH) yield lines.slice(i, i + AUDIT_BATCH);
  }
}

/** Writes the snapshot's files into `dataDir` (made 0700 when absent). Only files with something to hold are written. */
export async function writeFileState(dataDir: string, snapshot: StateSnapshot): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const at = (name: string) => path.join(dataDir, name);
  if (snapshot.keys.length > 0) await writeFileAtomic(at(KEYS_FILE_NAME), serializeKeysFile(snapshot.keys));
  if (snapshot.lastUsed.size > 0) await writeFileAtomic(at(LAST_USED_FILE_NAME), serializeLastUsedFile(snapshot.lastUsed));
  if (snapshot.tokens.length > 0) await writeFileAtomic(at(ADMIN_TOKENS_FILE_NAME), serializeTokenFile(snapshot.tokens));
  if (snapshot.usage.size > 0) await writeFileAtomic(at(USAGE_FILE), serializeUsageFile(snapshot.usage));
  if (snapshot.budgets.length > 0) await writeFileAtomic(at(BUDGET_FILE), serializeBudgetJournal(snapshot.budgets));
}

/** Writes the chain into an empty `dataDir`: every line into audit.jsonl (the next append rotates it if it is too big), then audit.head. */
export function createFileAuditWriter(dataDir: string): { append(lines: string[]): Promise<void>; finish(head: ChainHead): Promise<void> } {
  let handle: Awaited<ReturnType<typeof open>> | null = null;
  return {
    async append(lines) {
      if (lines.length === 0) return;
      if (handle === null) {
        await mkdir(dataDir, { recursive: true, mode: 0o700 });
        handle = await open(path.join(dataDir, AUDIT_FILE), 'wx', PRIVATE_FILE_MODE);
        await handle.chmod(PRIVATE_FILE_MODE);
      }
      await handle.write(lines.join('\n') + '\n', null, 'utf8');
    },
    async finish(head) {
      if (handle === null) return;
      try {
        await handle.sync();
      } finally {
        await handle.close();
        handle = null;
      }
      // The format file-audit-log.ts writes after each append.
      await writeFileAtomic(path.join(dataDir, AUDIT_HEAD_FILE), headJson({ seq: head.seq, hash: head.hash, next: null, open: [] }) + '\n');
      await syncDirectory(dataDir);
    },
  };
}
