// Cost on the command line: --cost-budget on keys create and update, the budget shown as
// `25.50 USD/month` with the currency of the config the CLI loads (through runCli, as
// the portcullis command runs), cost in `keys show` and `keys usage`, and `keys usage ID`
// printing one key's days or hours. Series tests pin the clock (runKeysCommand).
// All in-process: the compiled bin as a process is cli.system.test.ts's.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runKeysCommand } from '../../src/cli/keys-command.ts';
import { sink } from '../support/collect.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';
import { recordingAuditTrail } from '../admin/recording-audit-trail.ts';
import { portcullis } from './portcullis-in-process.ts';

const root = tempDir('keys-cost');
const freshDir = (): string => freshPath(root, 'data');

/** The portcullis command as main.ts runs it: the embedded config (currency USD), the data directory given. */
function cli(args: string[], dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return portcullis([...args, '--data-dir', dataDir], { cwd: root });
}

const NOW = Date.parse('2026-11-22T05:30:00.000Z');

/** runKeysCommand with a pinned clock and no config: amounts show without a currency code. */
async function keys(args: string[], dataDir: string, currency?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const code = await runKeysCommand(args, { dataDir, stdout: stdout.stream, stderr: stderr.stream, clock: () => NOW, audit: recordingAuditTrail(), ...(currency === undefined ? {} : { currency }) });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const idOf = (stdout: string): string => (/^id: +(key_\w{16})$/m.exec(stdout) as RegExpExecArray)[1] as string;

test('create and update --cost-budget: stored as written, shown in the config currency, "none" clears it', async () => {
  const dir = freshDir();
  const created = await cli(['keys', 'create', '--name', 'priced', '--cost-budget', '25.50/month'], dir);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /\nlimits:  25\.50 USD\/month\n/);
  const id = idOf(created.stdout);
  const stored = JSON.parse(readFileSync(path.join(dir, 'keys.json'), 'utf8')) as { keys: Array<{ limits: unknown }> };
  assert.deepEqual(stored.keys[0]?.limits, { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null, costBudget: { amount: 25.5, period: 'month' } });

  const updated = await cli(['keys', 'update', id, '--cost-budget', '0.125/day', '--budget', '5000/day'], dir);
  assert.equal(updated.code, 0, updated.stderr);
  assert.match(updated.stdout, /\nlimits:    5000 tokens\/day, 0\.125 USD\/day\n/);
  const shown = await cli(['keys', 'show', id], dir);
  assert.match(shown.stdout, /\nlimits:    5000 tokens\/day, 0\.125 USD\/day\nusage:     none recorded\n$/);
  const json = JSON.parse((await cli(['keys', 'show', id, '--json'], dir)).stdout) as { limits: { costBudget: unknown } };
  assert.deepEqual(json.limits.costBudget, { amount: 0.125, period: 'day' });
  const listed = JSON.parse((await cli(['keys', 'list', '--json'], dir)).stdout) as Array<{ limits: { costBudget: unknown } }>;
  assert.deepEqual(listed[0]?.limits.costBudget, { amount: 0.125, period: 'day' });

  const cleared = await cli(['keys', 'update', id, '--cost-budget', 'none'], dir);
  assert.match(cleared.stdout, /\nlimits:    5000 tokens\/day\n/);
  // Cleared: keys.json writes no costBudget at all (readable by versions before cost budgets).
  const limits = (JSON.parse(readFileSync(path.join(dir, 'keys.json'), 'utf8')) as { keys: Array<{ limits: Record<string, unknown> }> }).keys[0]?.limits;
  assert.equal(limits !== undefined && 'costBudget' in limits, false);
});

test('a bad --cost-budget is a usage error naming the flag; nothing is written', async () => {
  const dir = freshDir();
  const hint = 'Run "portcullis keys create --help" for usage.\n';
  const shape = '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"';
  for (const [value, message] of [
    ['25.50', shape],
    ['25.5/week', shape],
    ['1.0000001/day', shape],
    ['0/month', '--cost-budget: the amount must be above 0 and at most 1000000; got 0'],
    ['2000000/month', '--cost-budget: the amount must be above 0 and at most 1000000; got 2000000'],
  ] as const) {
    assert.deepEqual(await keys(['create', '--name', 'x', '--cost-budget', value], dir), { code: 2, stdout: '', stderr: `portcullis keys create: ${message}\n${hint}` }, value);
  }
  assert.deepEqual(await keys(['create', '--name', 'x', '--cost-budget'], dir), {
    code: 2,
    stdout: '',
    stderr: `portcullis keys create: option '--cost-budget' needs a value (write --cost-budget=VALUE for a value starting with '-')\n${hint}`,
  });
  const viaCli = await cli(['keys', 'create', '--name', 'x', '--cost-budget', 'lots'], dir);
  assert.equal(viaCli.code, 2);
  assert.match(viaCli.stderr, new RegExp(`portcullis keys create: ${shape.replace(/[.()/]/g, '\\$&')}\\n`));
});

/** A data directory with one key and usage recorded at NOW's day and hour (and the day before). */
async function meteredDir(): Promise<{ dir: string; id: string }> {
  const dir = freshDir();
  const created = await keys(['create', '--name', 'metered', '--cost-budget', '3/day'], dir);
  const id = idOf(created.stdout);
  const a = { requests: 2, promptTokens: 1000, completionTokens: 200, cachedTokens: 100, errors: 0, costNanos: 1_234_567, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };
  const b = { requests: 1, promptTokens: 10, completionTokens: 0, cachedTokens: 0, errors: 1, costNanos: 1, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };
  const total = { requests: 3, promptTokens: 1010, completionTokens: 200, cachedTokens: 100, errors: 1, costNanos: 1_234_568, guardBlocked: 0, guardMasked: 0, guardLogged: 0 };
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'usage.json'), JSON.stringify({ version: 2, keys: { [id]: { totals: total, hours: { '2026-11-21T23': a, '2026-11-22T05': b }, days: { '2026-11-21': a, '2026-11-22': b } } } }));
  return { dir, id };
}

test('keys show and keys usage: cost beside tokens, in the currency when the config gives one', async () => {
  const { dir, id } = await meteredDir();
  const shown = await keys(['show', id], dir, 'USD');
  assert.match(shown.stdout, /\nlimits:    3\.00 USD\/day\nusage:     3 requests, 1010 prompt \+ 200 completion tokens, 0\.001234568 USD \(all time\)\n$/);
  assert.match((await keys(['show', id], dir)).stdout, /\nlimits:    3\.00\/day\nusage:     3 requests, 1010 prompt \+ 200 completion tokens, 0\.001234568 \(all time\)\n$/);

  assert.deepEqual(await keys(['usage'], dir, 'EUR'), {
    code: 0,
    stderr: '',
    stdout: 'ID                    NAME     REQUESTS  PROMPT  COMPLETION  CACHED  ERRORS  COST             STATUS\n' + `${id}  metered  3         1010    200         100     1       0.001234568 EUR  active\n`,
  });
  const rows = JSON.parse((await keys(['usage', '--json'], dir)).stdout) as Array<Record<string, unknown>>;
  assert.deepEqual(rows.map(({ prefix: _prefix, ...rest }) => rest), [
    { id, name: 'metered', status: 'active', requests: 3, promptTokens: 1010, completionTokens: 200, cachedTokens: 100, errors: 1, costNanos: 1_234_568, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 0.001234568 },
  ]);

  // A usage file that cannot be read: show still shows the key, and says so.
  writeFileSync(path.join(dir, 'usage.json'), 'garbage');
  const broken = await keys(['show', id], dir);
  assert.equal(broken.code, 0);
  assert.match(broken.stdout, new RegExp(`\\nusage:     unreadable: ${path.join(dir, 'usage.json').replace(/[.\\]/g, '\\$&')}: is not valid JSON\\n$`));
});

test('keys usage ID: one key per UTC day (30) or hour (48), then all time; --json as the admin API', async () => {
  const { dir, id } = await meteredDir();
  const days = await keys(['usage', id], dir, 'USD');
  assert.equal(days.code, 0, days.stderr);
  const dayLines = days.stdout.split('\n');
  assert.equal(dayLines[0], `Usage of ${id} ("metered") per UTC day, as recorded by the gateway:`);
  assert.equal(dayLines[2], 'DAY         REQUESTS  PROMPT  COMPLETION  CACHED  ERRORS  COST');
  assert.equal(dayLines[3], '2026-10-24  0         0       0           0       0       0.000000 USD');
  assert.equal(dayLines[31], '2026-11-21  2         1000    200         100     0       0.001234567 USD');
  assert.equal(dayLines[32], '2026-11-22  1         10      0           0       1       0.000000001 USD');
  assert.equal(dayLines[33], 'all time    3         1010    200         100     1       0.001234568 USD');
  assert.equal(dayLines.length, 35);
  assert.equal(dayLines[34], '');

  const hours = (await keys(['usage', id, '--granularity', 'hour'], dir)).stdout.split('\n');
  assert.equal(hours[2], 'HOUR               REQUESTS  PROMPT  COMPLETION  CACHED  ERRORS  COST');
  assert.equal(hours[3], '2026-11-20T06:00Z  0         0       0           0       0       0.000000');
  assert.equal(hours[44], '2026-11-21T23:00Z  2         1000    200         100     0       0.001234567');
  assert.equal(hours[50], '2026-11-22T05:00Z  1         10      0           0       1       0.000000001');
  assert.equal(hours[51], 'all time           3         1010    200         100     1       0.001234568');
  assert.equal(hours.length, 53);

  const json = JSON.parse((await keys(['usage', id, '--json'], dir, 'USD')).stdout) as { keyId: string; granularity: string; buckets: unknown[]; totals: unknown; currency: string };
  assert.deepEqual([json.keyId, json.granularity, json.buckets.length, json.currency], [id, 'day', 30, 'USD']);
  assert.deepEqual(json.buckets.at(-1), { start: '2026-11-22T00:00:00.000Z', requests: 1, promptTokens: 10, completionTokens: 0, cachedTokens: 0, errors: 1, costNanos: 1, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 1e-9 });
  assert.deepEqual(json.totals, { requests: 3, promptTokens: 1010, completionTokens: 200, cachedTokens: 100, errors: 1, costNanos: 1_234_568, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 0.001234568 });
  assert.equal((JSON.parse((await keys(['usage', id, '--json'], dir)).stdout) as { currency: unknown }).currency, null);
});

test('keys usage refusals: two ids, --granularity without an id or not day/hour (exit 2); an unknown id (exit 1)', async () => {
  const { dir, id } = await meteredDir();
  const hint = 'Run "portcullis keys usage --help" for usage.\n';
  assert.deepEqual(await keys(['usage', id, id], dir), { code: 2, stdout: '', stderr: `portcullis keys usage: expected at most one key ID, got 2\n${hint}` });
  assert.deepEqual(await keys(['usage', '--granularity', 'day'], dir), { code: 2, stdout: '', stderr: `portcullis keys usage: --granularity needs a key ID: portcullis keys usage ID --granularity day\n${hint}` });
  assert.deepEqual(await keys(['usage', id, '--granularity', 'week'], dir), {
    code: 2,
    stdout: '',
    stderr: `portcullis keys usage: --granularity must be "day" (the last 30 UTC days) or "hour" (the last 48 UTC hours); got "week"\n${hint}`,
  });
  assert.deepEqual(await keys(['usage', 'key_CCCCCCCCCCCCCCCC'], dir), {
    code: 1,
    stdout: '',
    stderr: 'portcullis keys usage: No API key has the id \'key_CCCCCCCCCCCCCCCC\'. Run "portcullis keys list" to see the ids.\n',
  });
});

test('the portcullis command: keys create --cost-budget, then keys show and keys usage', async () => {
  const dir = freshDir();
  const run = (...args: string[]) => cli(['keys', ...args], dir);
  const created = await run('create', '--name', 'spawned', '--cost-budget', '1000000/day');
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /\nlimits:  1000000\.00 USD\/day\n/);
  const id = idOf(created.stdout);
  assert.match((await run('show', id)).stdout, /\nlimits:    1000000\.00 USD\/day\nusage:     none recorded\n$/);
  const usage = await run('usage');
  assert.equal(usage.stdout, 'ID                    NAME     REQUESTS  PROMPT  COMPLETION  CACHED  ERRORS  COST          STATUS\n' + `${id}  spawned  0         0       0           0       0       0.000000 USD  active\n`);
  const bad = await run('update', id, '--cost-budget', '5/week');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /portcullis keys update: --cost-budget must look like 25\.50\/month or 5\/day/);
});
