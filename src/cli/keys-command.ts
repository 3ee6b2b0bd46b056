// `portcullis keys create|list|show|update|rotate|revoke|usage`: the operator's side of the key store.
// Exit codes: 0 done, 1 the store refused or failed (message on stderr), 2 the command
// line is wrong (message and usage hint on stderr). The raw key is printed once, by
// `create` and `rotate`, and appears nowhere else: not in listings, errors or logs.
// `--config FILE` is consumed by main.ts, which resolves ctx.dataDir from it.

import { parseArgs } from 'node:util';
import { describeArgumentProblem, type OptionSpec, unknownArgument, refuseCommandLine } from './argument-problem.ts';
import type { AuditTrail } from '../audit/audit-event.ts';
import { AuditLogError } from '../audit/audit-log.ts';
import { InvalidKeyNameError, InvalidKeySettingError, KeyStoreError } from '../keys/errors.ts';
import { FileError } from '../files/errors.ts';
import { keyStatus } from '../keys/key-settings.ts';
import { auditedKeyStore, type AuditWho } from '../state/audited-key-store.ts';
import { openKeyStore } from '../state/file-key-store.ts';
import { DEFAULT_RELOAD_INTERVAL_MS } from '../state/key-store-port.ts';
import type { KeyStore } from '../state/key-store-port.ts';
import { createFileUsageStore } from '../state/file-usage-store.ts';
import type { UsageStore } from '../state/state-backend.ts';
import { UsageFileError } from '../usage/usage-file.ts';
import { cliWho } from './cli-actor.ts';
import { describeGuard, describeLimits, inFlagWords, KEY_SETTING_OPTIONS, KeyOptionError, keySettingsFromFlags, limitChangesFromFlags } from './key-options.ts';
import { CREATE_USAGE, KEYS_USAGE, LIST_USAGE, REVOKE_USAGE, ROTATE_USAGE, SHOW_USAGE, UPDATE_USAGE, USAGE_USAGE } from './keys-help.ts';
import { describeKey, describeUsage, publicRecord, renderKeyList, toJson } from './keys-output.ts';
import { runUsage, USAGE_OPTIONS } from './keys-usage-command.ts';

/** What a keys command works on: the configured state backend's keys and usage. */
interface KeysStore {
  keys: KeyStore;
  usage: UsageStore;
  close(): Promise<void>;
}

interface KeysCommandContext {
  dataDir: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Opens the configured backend (Redis); default: the files in dataDir. */
  openStore?: () => Promise<KeysStore>;
  /** Milliseconds since the epoch (tests pin it). */
  clock?: () => number;
  /** How the user runs portcullis here, for hints (default "portcullis"). */
  command?: string;
  /** The config's currency, for cost budgets and costs; without one, amounts show no code. */
  currency?: string;
  /** Where create, update, rotate and revoke are recorded (docs/audit.md, "What each door records"). */
  audit: AuditTrail;
  /** Who acts, as the records name them; default: this process's OS user (cli-actor.ts). */
  who?: AuditWho;
}


interface Subcommand {
  usage: string;
  /** Reads only: a missing data directory is not created. */
  readOnly?: boolean;
  options: OptionSpec;
  allowPositionals: boolean;
  run(store: KeysStore, values: Record<string, string | boolean | string[] | undefined>, positionals: string[], ctx: KeysCommandContext): Promise<number>;
}

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;
const JSON_OPTION = { json: { type: 'boolean' } } as const;
const REVOKE_DELAY_SECONDS = DEFAULT_RELOAD_INTERVAL_MS / 1000;

function oneId(ctx: KeysCommandContext, name: string, positionals: string[]): string | number {
  const [id, extra] = positionals;
  if (id === undefined) return usageError(ctx, name, 'missing key ID');
  if (extra !== undefined) return usageError(ctx, name, 'expected one key ID, got ' + positionals.length);
  return id;
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  create: {
    usage: CREATE_USAGE,
    options: { ...HELP_OPTION, ...JSON_OPTION, name: { type: 'string' }, ...KEY_SETTING_OPTIONS },
    allowPositionals: false,
    async run(store, values, _positionals, ctx) {
      const name = values['name'];
      if (typeof name !== 'string') return usageError(ctx, 'create', "missing required option '--name NAME'");
      const { key, record } = await store.keys.create(name, keySettingsFromFlags(values, null));
      if (values['json'] === true) {
        const { id, prefix, createdAt, expiresAt, allowedAliases, limits, guard } = record;
        ctx.stdout.write(toJson({ id, name: record.name, prefix, createdAt, expiresAt, allowedAliases, limits, guard, key }));
        return 0;
      }
      ctx.stdout.write(
        'API key created. Copy it now: it cannot be shown again.\n\n' +
          `  ${key}\n\n` +
          `id:      ${record.id}\n` +
          `name:    ${record.name}\n` +
          `prefix:  ${record.prefix}\n` +
          `created: ${record.createdAt}\n` +
          (record.expiresAt === null ? '' : `expires: ${record.expiresAt}\n`) +
          (record.allowedAliases === null ? '' : `aliases: ${record.allowedAliases.join(', ')}\n`) +
          (describeLimits(record.limits) === 'none' ? '' : `limits:  ${describeLimits(record.limits, ctx.currency)}\n`) +
          (describeGuard(record.guard) === 'none' ? '' : `guard:   ${describeGuard(record.guard)}\n`) +
          '\n' +
          'Clients send it in the header "Authorization: Bearer <key>".\n',
      );
      return 0;
    },
  },
  list: {
    usage: LIST_USAGE,
    readOnly: true,
    options: { ...HELP_OPTION, ...JSON_OPTION },
    allowPositionals: false,
    async run(store, values, _positionals, ctx) {
      const keys = await store.keys.list();
      if (values['json'] === true) {
        ctx.stdout.write(
          toJson(
            keys.map((k) => ({
              id: k.id,
              name: k.name,
              prefix: k.prefix,
              createdAt: k.createdAt,
              revokedAt: k.revokedAt,
              lastUsedAt: k.lastUsedAt,
              status: keyStatus(k, (ctx.clock ?? Date.now)()),
              expiresAt: k.expiresAt,
              allowedAliases: k.allowedAliases,
              limits: k.limits,
              guard: k.guard,
            })),
          ),
        );
      } else {
        ctx.stdout.write(renderKeyList(keys, (ctx.clock ?? Date.now)(), ctx.command));
      }
      return 0;
    },
  },
  show: {
    usage: SHOW_USAGE,
    readOnly: true,
    options: { ...HELP_OPTION, ...JSON_OPTION },
    allowPositionals: true,
    async run(store, values, positionals, ctx) {
      const id = oneId(ctx, 'show', positionals);
      if (typeof id === 'number') return id;
      const key = await store.keys.get(id);
      const now = (ctx.clock ?? Date.now)();
      if (values['json'] === true) {
        ctx.stdout.write(toJson(publicRecord(key, now)));
        return 0;
      }
      ctx.stdout.write(describeKey(key, now, ctx.currency) + (await describeUsage(store.usage, key.id, now, ctx.currency)));
      return 0;
    },
  },
  update: {
    usage: UPDATE_USAGE,
    options: { ...HELP_OPTION, ...JSON_OPTION, name: { type: 'string' }, ...KEY_SETTING_OPTIONS },
    allowPositionals: true,
    async run(store, values, positionals, ctx) {
      const id = oneId(ctx, 'update', positionals);
      if (typeof id === 'number') return id;
      // Refuses an unknown id before anything else is said about the flags.
      await store.keys.get(id);
      // Limits go as changes: the store merges them with the key's limits under its lock.
      const { limits: _whole, ...settings } = keySettingsFromFlags(values, null);
      const limitChanges = limitChangesFromFlags(values);
      const patch = {
        ...settings,
        ...(limitChanges === undefined ? {} : { limitChanges }),
        ...(typeof values['name'] === 'string' ? { name: values['name'] } : {}),
      };
      if (Object.keys(patch).length === 0) return usageError(ctx, 'update', 'nothing to change: give --name or a setting');
      const updated = await store.keys.update(id, patch);
      const now = (ctx.clock ?? Date.now)();
      ctx.stdout.write(values['json'] === true ? toJson(publicRecord(updated, now)) : `Updated API key ${updated.id}. Running servers apply it within ${REVOKE_DELAY_SECONDS} second.\n\n${describeKey(updated, now, ctx.currency)}`);
      return 0;
    },
  },
  rotate: {
    usage: ROTATE_USAGE,
    options: { ...HELP_OPTION, ...JSON_OPTION },
    allowPositionals: true,
    async run(store, values, positionals, ctx) {
      const id = oneId(ctx, 'rotate', positionals);
      if (typeof id === 'number') return id;
      const { key, record } = await store.keys.rotate(id);
      if (values['json'] === true) {
        ctx.stdout.write(toJson({ id: record.id, name: record.name, prefix: record.prefix, rotatedAt: record.rotatedAt, key }));
        return 0;
      }
      ctx.stdout.write(
        'New secret for the key. Copy it now: it cannot be shown again.\n\n' +
          `  ${key}\n\n` +
          `id:      ${record.id}\n` +
          `name:    ${record.name}\n` +
          `prefix:  ${record.prefix}\n` +
          `rotated: ${record.rotatedAt ?? ''}\n\n` +
          `The old secret stops working within ${REVOKE_DELAY_SECONDS} second.\n`,
      );
      return 0;
    },
  },
  revoke: {
    usage: REVOKE_USAGE,
    options: { ...HELP_OPTION, ...JSON_OPTION },
    allowPositionals: true,
    async run(store, values, positionals, ctx) {
      const id = oneId(ctx, 'revoke', positionals);
      if (typeof id === 'number') return id;
      const revoked = await store.keys.revoke(id);
      if (values['json'] === true) {
        const { name, prefix, createdAt, revokedAt } = revoked;
        ctx.stdout.write(toJson({ id: revoked.id, name, prefix, createdAt, revokedAt }));
        return 0;
      }
      ctx.stdout.write(
        `Revoked API key ${revoked.id} ("${revoked.name}", prefix ${revoked.prefix}).\n` +
          `Running servers refuse it within ${REVOKE_DELAY_SECONDS} second.\n`,
      );
      return 0;
    },
  },
  usage: {
    usage: USAGE_USAGE,
    readOnly: true,
    options: { ...HELP_OPTION, ...JSON_OPTION, ...USAGE_OPTIONS },
    allowPositionals: true,
    run: (store, values, positionals, ctx) => runUsage(store, values, positionals, ctx),
  },
};

function usageError(ctx: KeysCommandContext, subcommand: string | null, problem: string): number {
  return refuseCommandLine(ctx.stderr, 'portcullis keys', subcommand, problem);
}

function wantsHelp(subcommand: Subcommand, args: string[]): boolean {
  const { tokens } = parseArgs({ args, options: subcommand.options, strict: false, allowPositionals: true, tokens: true });
  return tokens.some((t) => t.kind === 'option' && t.name === 'help');
}

/** Run `portcullis keys ...`; resolves to the process exit code. */
export async function runKeysCommand(args: string[], ctx: KeysCommandContext): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined) return usageError(ctx, null, 'missing command (create, list, show, update, rotate, revoke or usage)');
  if (name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(KEYS_USAGE);
    return 0;
  }
  const subcommand = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  if (subcommand === undefined) {
    return usageError(ctx, null, unknownArgument(name, ['help'], Object.keys(SUBCOMMANDS)));
  }
  // Help wins over any other problem on the line, and never opens the store
  // (main.ts passes no data directory when it sees --help).
  if (wantsHelp(subcommand, rest)) {
    ctx.stdout.write(subcommand.usage);
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: subcommand.options, strict: true, allowPositionals: subcommand.allowPositionals });
  } catch (error) {
    return usageError(ctx, name, describeArgumentProblem(subcommand, rest, error as Error));
  }
  if (ctx.openStore === undefined && ctx.dataDir === '') {
    ctx.stderr.write(`portcullis keys ${name}: no data directory is configured.\n`);
    return 1;
  }

  let store: KeysStore | null = null;
  try {
    store = await (ctx.openStore ?? (() => Promise.resolve(openFileStore(ctx.dataDir, subcommand.readOnly === true))))();
    // Every change a subcommand makes goes through the audited store: one record each, whichever backend.
    const keys = auditedKeyStore(store.keys, ctx.audit, ctx.who ?? cliWho(process.env), ctx.clock);
    return await subcommand.run({ ...store, keys }, parsed.values, parsed.positionals, ctx);
  } catch (error) {
    if (error instanceof InvalidKeyNameError || error instanceof InvalidKeySettingError) return usageError(ctx, name, inFlagWords(error, parsed.values));
    if (error instanceof KeyOptionError) return usageError(ctx, name, error.message);
    if (error instanceof KeyStoreError || error instanceof FileError || error instanceof UsageFileError) {
      ctx.stderr.write(`portcullis keys ${name}: ${error.message}\n`);
      return 1;
    }
    if (error instanceof AuditLogError) {
      ctx.stderr.write(`portcullis keys ${name}: the change was not made, because its audit record could not be written: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await store?.close();
  }
}

/** The files in the data directory. No watcher: a CLI run reads and writes once and exits. */
function openFileStore(dataDir: string, readOnly: boolean): KeysStore {
  const keys = openKeyStore(dataDir, { watch: false, createDir: !readOnly });
  return { keys, usage: createFileUsageStore(dataDir), close: () => keys.close() };
}
