import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { runKeysCommand } from '../../src/cli/keys-command.ts';
import { KEYS_USAGE } from '../../src/cli/keys-help.ts';
import { hashApiKey } from '../../src/keys/api-key.ts';
import { openKeyStore } from '../../src/state/file-key-store.ts';
import { NO_LIMITS } from '../../src/limits/key-limits.ts';
import { sink } from '../support/collect.ts';
import { recordingAuditTrail } from '../admin/recording-audit-trail.ts';
import { freshDir, freshPath, tempDir } from '../support/temp-dir.ts';

const root = tempDir('keys-cli');


/** `show` and `update` judge expiry by ctx.clock; tests pin it unless they say otherwise. */
const NOW_MS = Date.parse('2026-06-01T00:00:00.000Z');

async function run(args: string[], dataDir: string, nowMs: number = NOW_MS): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const code = await runKeysCommand(args, { dataDir, stdout: stdout.stream, stderr: stderr.stream, clock: () => nowMs, audit: recordingAuditTrail() });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const KEY_A = 'pcl_AbC1x9QzAbC1x9QzAbC1x9QzAbC1x9QzAbC1x9QzAbC1FZajM';
const KEY_B = 'pcl_00000000000000000000000000000000000000000002CZclj';

/** A data directory holding two known keys (one revoked) and a last-used file. */
function seededDir(): string {
  const dir = freshPath(root, 'data');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'keys.json'),
    JSON.stringify({
      version: 1,
      keys: [
        { id: 'key_AAAAAAAAAAAAAAAA', name: 'my app', prefix: 'pcl_AbC1x9Qz', hash: hashApiKey(KEY_A), createdAt: '2025-01-31T12:00:00.000Z', revokedAt: null },
        { id: 'key_BBBBBBBBBBBBBBBB', name: 'old ci', prefix: 'pcl_00000000', hash: hashApiKey(KEY_B), createdAt: '2025-01-01T08:30:00.000Z', revokedAt: '2025-01-15T00:00:00.000Z' },
      ],
    }),
  );
  writeFileSync(path.join(dir, 'keys-last-used.json'), JSON.stringify({ version: 1, lastUsed: { key_AAAAAAAAAAAAAAAA: '2025-02-01T09:15:30.123Z' } }));
  return dir;
}

/** The settings flags' help, shared by create and update (pinned in test/cli/key-options.test.ts too). */
const SETTING_HELP =
  '  --allow ALIASES       Comma-separated aliases the key may use, or "all" (default all)\n' +
  '  --expires TIME        Expiry as an ISO 8601 time with a zone (2027-01-31T00:00:00Z), or "never"\n' +
  '  --rpm N               Requests per minute ("none" for unlimited)\n' +
  '  --tpm N               Tokens per minute, estimated before and settled after each call ("none")\n' +
  '  --concurrency N       Requests at once ("none")\n' +
  '  --budget N/PERIOD     Tokens per UTC day or month, e.g. 2000000/month ("none")\n' +
  '  --cost-budget AMOUNT  Money per UTC day or month in the config\'s currency, e.g. 25.50/month ("none")\n' +
  '  --guard NAME=ACTION   The egress guard for this key\'s requests, stricter than the alias\'s only: a\n' +
  '                        detector or group (secrets, personal) and off, log, mask or block, e.g.\n' +
  '                        --guard secrets=block --guard email=mask. Repeat it for each; the ones given\n' +
  '                        replace the key\'s whole guard ("none" removes it)\n';

test('keys --help, -h and help print the usage on stdout and exit 0', async () => {
  assert.equal(
    KEYS_USAGE,
    'Usage: portcullis keys <command> [options]\n\n' +
      'Manage the API keys clients send as "Authorization: Bearer <key>".\n\n' +
      'Commands:\n' +
      '  create --name NAME   Create a key and print it once\n' +
      '  list                 List keys with their status and last use (never the keys)\n' +
      "  show ID              One key's settings: allowed aliases, expiry, limits, guard\n" +
      "  update ID            Change a key's name, allowed aliases, expiry, limits or guard\n" +
      '  rotate ID            Give a key a new secret (same id and history); prints it once\n' +
      '  revoke ID            Revoke a key by id\n' +
      "  usage [ID]           Requests, tokens, errors and cost per key, or one key's days or hours\n\n" +
      'Options:\n' +
      '  -h, --help           Show this help; "portcullis keys <command> --help" for a command\n',
  );
  for (const flag of ['--help', '-h', 'help']) {
    assert.deepEqual(await run([flag], ''), { code: 0, stdout: KEYS_USAGE, stderr: '' });
  }
});

test('each subcommand has its own --help, which wins over other problems and never opens the store', async () => {
  const create = await run(['create', '--help'], '');
  assert.deepEqual(create, {
    code: 0,
    stderr: '',
    stdout:
      'Usage: portcullis keys create --name NAME [settings] [--json]\n\n' +
      'Create an API key. The key is printed once and cannot be shown again:\n' +
      'only its SHA-256 hash is stored.\n\n' +
      'Options:\n' +
      '  --name NAME           A label for the key, 1 to 64 printable characters (required)\n' +
      SETTING_HELP +
      '  --json                Print {"id","name","prefix","createdAt","expiresAt","allowedAliases","limits","guard","key"} as JSON\n' +
      '  -h, --help            Show this help\n',
  });
  assert.deepEqual(await run(['show', '-h'], ''), {
    code: 0,
    stderr: '',
    stdout:
      'Usage: portcullis keys show ID [--json]\n\n' +
      'Show one key: status, times, allowed aliases, expiry, limits (never the key) and\n' +
      "the usage recorded for it, with its cost in the config's currency.\n\n" +
      'Options:\n' +
      "  --json       Print the key's record (without its hash) as JSON\n" +
      '  -h, --help   Show this help\n',
  });
  assert.deepEqual(await run(['update', 'key_AAAAAAAAAAAAAAAA', '--rpm', 'abc', '--help'], ''), {
    code: 0,
    stderr: '',
    stdout:
      'Usage: portcullis keys update ID [--name NAME] [settings] [--json]\n\n' +
      "Change a key's settings; options not given stay as they are. Running servers\n" +
      'apply the change within 1 second.\n\n' +
      'Options:\n' +
      '  --name NAME           A new label\n' +
      SETTING_HELP +
      '  --json                Print the updated key as JSON\n' +
      '  -h, --help            Show this help\n',
  });
  assert.deepEqual(await run(['rotate', '--help'], ''), {
    code: 0,
    stderr: '',
    stdout:
      'Usage: portcullis keys rotate ID [--json]\n\n' +
      "Replace a key's secret: same id, settings and usage history, new key printed\n" +
      'once. The old key stops working within 1 second.\n\n' +
      'Options:\n' +
      '  --json       Print {"id","name","prefix","rotatedAt","key"} as JSON\n' +
      '  -h, --help   Show this help\n',
  });
  const list = await run(['list', '-h'], '');
  assert.equal(list.code, 0);
  assert.match(list.stdout, /^Usage: portcullis keys list \[--json\]\n/);
  const revoke = await run(['revoke', '--bogus', '--help'], '');
  assert.equal(revoke.code, 0);
  assert.equal(
    revoke.stdout,
    'Usage: portcullis keys revoke ID [--json]\n\n' +
      'Revoke the API key with id ID (see "portcullis keys list"). Running servers\n' +
      'refuse it within 1 second. Revoking a revoked key is an error.\n\n' +
      'Options:\n' +
      '  --json       Print the revoked key\'s {"id","name","prefix","createdAt","revokedAt"} as JSON\n' +
      '  -h, --help   Show this help\n',
  );
  const dir = freshPath(root, 'data');
  assert.equal((await run(['create', '--name', 'x', '--help'], dir)).code, 0);
  assert.equal(existsSync(dir), false, 'help does not create the data directory');
});

test('command line problems: message naming the problem, usage hint, exit 2', async () => {
  const dir = freshPath(root, 'data');
  const cases: [string[], string][] = [
    [[], 'portcullis keys: missing command (create, list, show, update, rotate, revoke or usage)\nRun "portcullis keys --help" for usage.\n'],
    [['delete'], 'portcullis keys: unknown command \'delete\'\nRun "portcullis keys --help" for usage.\n'],
    [['--verbose'], 'portcullis keys: unknown option \'--verbose\'\nRun "portcullis keys --help" for usage.\n'],
    [['lsit'], 'portcullis keys: unknown command \'lsit\'; did you mean \'list\'?\nRun "portcullis keys --help" for usage.\n'],
    [['create', '--nme', 'a'], 'portcullis keys create: unknown option \'--nme\'; did you mean \'--name\'?\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--Name=a'], 'portcullis keys create: unknown option \'--Name\'; did you mean \'--name\'?\nRun "portcullis keys create --help" for usage.\n'],
    [['create'], 'portcullis keys create: missing required option \'--name NAME\'\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name'], 'portcullis keys create: option \'--name\' needs a value (write --name=VALUE for a value starting with \'-\')\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name', '--json'], 'portcullis keys create: option \'--name\' needs a value (write --name=VALUE for a value starting with \'-\')\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name', 'a', '--scope', 'all'], 'portcullis keys create: unknown option \'--scope\'\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '-n', 'a'], 'portcullis keys create: unknown option \'-n\'\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name', 'a', 'extra'], 'portcullis keys create: unexpected argument \'extra\'\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name', '   '], 'portcullis keys create: --name: it is empty\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name', 'x'.repeat(65)], 'portcullis keys create: --name: it has 65 characters, the limit is 64\nRun "portcullis keys create --help" for usage.\n'],
    [['list', 'all'], 'portcullis keys list: unexpected argument \'all\'\nRun "portcullis keys list --help" for usage.\n'],
    [['list', '--json=yes'], 'portcullis keys list: option \'--json\' does not take a value\nRun "portcullis keys list --help" for usage.\n'],
    [['revoke'], 'portcullis keys revoke: missing key ID\nRun "portcullis keys revoke --help" for usage.\n'],
    [['revoke', 'key_AAAAAAAAAAAAAAAA', 'key_BBBBBBBBBBBBBBBB'], 'portcullis keys revoke: expected one key ID, got 2\nRun "portcullis keys revoke --help" for usage.\n'],
    [['show'], 'portcullis keys show: missing key ID\nRun "portcullis keys show --help" for usage.\n'],
    [['show', 'key_AAAAAAAAAAAAAAAA', '--rpm', '5'], 'portcullis keys show: unknown option \'--rpm\'\nRun "portcullis keys show --help" for usage.\n'],
    [['update', '--rpm', '5'], 'portcullis keys update: missing key ID\nRun "portcullis keys update --help" for usage.\n'],
    [['update', 'key_AAAAAAAAAAAAAAAA', '--rpm'], 'portcullis keys update: option \'--rpm\' needs a value (write --rpm=VALUE for a value starting with \'-\')\nRun "portcullis keys update --help" for usage.\n'],
    [['update', 'key_AAAAAAAAAAAAAAAA', '--scope', 'x'], 'portcullis keys update: unknown option \'--scope\'\nRun "portcullis keys update --help" for usage.\n'],
    [['rotate'], 'portcullis keys rotate: missing key ID\nRun "portcullis keys rotate --help" for usage.\n'],
    [['rotate', 'key_AAAAAAAAAAAAAAAA', 'key_BBBBBBBBBBBBBBBB'], 'portcullis keys rotate: expected one key ID, got 2\nRun "portcullis keys rotate --help" for usage.\n'],
    [['rotate', 'key_AAAAAAAAAAAAAAAA', '--name', 'x'], 'portcullis keys rotate: unknown option \'--name\'\nRun "portcullis keys rotate --help" for usage.\n'],
  ];
  for (const [args, stderr] of cases) {
    assert.deepEqual(await run(args, dir), { code: 2, stdout: '', stderr }, args.join(' '));
  }
  assert.equal(existsSync(path.join(dir, 'keys.json')), false, 'nothing was created');
});

test('create prints the key once with its id and prefix, and stores only its hash', async () => {
  const dir = freshPath(root, 'data');
  const { code, stdout, stderr } = await run(['create', '--name', 'my app'], dir);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  const match =
    /^API key created\. Copy it now: it cannot be shown again\.\n\n {2}(pcl_[0-9A-Za-z]{49})\n\nid: {6}(key_[0-9A-Za-z]{16})\nname: {4}my app\nprefix: {2}(pcl_[0-9A-Za-z]{8})\ncreated: (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\n\nClients send it in the header "Authorization: Bearer <key>"\.\n$/.exec(
      stdout,
    );
  assert.ok(match, stdout);
  const [, key, id, prefix, createdAt] = match as unknown as [string, string, string, string, string];
  assert.equal(prefix, key.slice(0, 12));
  assert.equal(stdout.split(key).length, 2, 'the key appears exactly once');
  const file = JSON.parse(readFileSync(path.join(dir, 'keys.json'), 'utf8')) as unknown;
  assert.deepEqual(file, {
    version: 2,
    keys: [{ id, name: 'my app', prefix, hash: hashApiKey(key), createdAt, revokedAt: null, rotatedAt: null, expiresAt: null, allowedAliases: null, limits: STORED_NO_LIMITS }],
  });
});

test('create --json prints {id,name,prefix,createdAt,expiresAt,allowedAliases,limits,guard,key}', async () => {
  const dir = freshPath(root, 'data');
  const { code, stdout, stderr } = await run(['create', '--json', '--name=ci bot'], dir);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  const printed = JSON.parse(stdout) as Record<string, string>;
  assert.deepEqual(Object.keys(printed), ['id', 'name', 'prefix', 'createdAt', 'expiresAt', 'allowedAliases', 'limits', 'guard', 'key']);
  const { id, prefix, createdAt, key } = printed as Record<string, string>;
  assert.equal(
    stdout,
    JSON.stringify({ id, name: 'ci bot', prefix, createdAt, expiresAt: null, allowedAliases: null, limits: NO_LIMITS, guard: null, key }, null, 2) + '\n',
  );
  assert.equal(prefix, String(key).slice(0, 12));
  const listed = JSON.parse((await run(['list', '--json'], dir)).stdout) as Record<string, unknown>[];
  assert.deepEqual(listed, [
    { id, name: 'ci bot', prefix, createdAt, revokedAt: null, lastUsedAt: null, status: 'active', expiresAt: null, allowedAliases: null, limits: NO_LIMITS, guard: null },
  ]);
});

test('list prints a table with last use and status, never a key', async () => {
  const dir = seededDir();
  assert.deepEqual(await run(['list'], dir), {
    code: 0,
    stderr: '',
    stdout:
      'ID                    NAME    PREFIX        CREATED               LAST USED             STATUS\n' +
      'key_AAAAAAAAAAAAAAAA  my app  pcl_AbC1x9Qz  2025-01-31T12:00:00Z  2025-02-01T09:15:30Z  active\n' +
      'key_BBBBBBBBBBBBBBBB  old ci  pcl_00000000  2025-01-01T08:30:00Z  never                 revoked\n',
  });
});

test('list --json prints an array for scripts, a version 1 keys.json read with default settings', async () => {
  const dir = seededDir();
  const { code, stdout, stderr } = await run(['list', '--json'], dir);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  assert.equal(
    stdout,
    JSON.stringify(
      [
        { id: 'key_AAAAAAAAAAAAAAAA', name: 'my app', prefix: 'pcl_AbC1x9Qz', createdAt: '2025-01-31T12:00:00.000Z', revokedAt: null, lastUsedAt: '2025-02-01T09:15:30.123Z', status: 'active', expiresAt: null, allowedAliases: null, limits: NO_LIMITS, guard: null },
        { id: 'key_BBBBBBBBBBBBBBBB', name: 'old ci', prefix: 'pcl_00000000', createdAt: '2025-01-01T08:30:00.000Z', revokedAt: '2025-01-15T00:00:00.000Z', lastUsedAt: null, status: 'revoked', expiresAt: null, allowedAliases: null, limits: NO_LIMITS, guard: null },
      ],
      null,
      2,
    ) + '\n',
  );
  assert.equal(stdout.includes('hash'), false);
});

test('list of an empty store says how to create a key', async () => {
  assert.deepEqual(await run(['list'], freshPath(root, 'data')), {
    code: 0,
    stderr: '',
    stdout: 'No API keys yet. Create one with: portcullis keys create --name NAME\n',
  });
  assert.deepEqual(await run(['list', '--json'], freshPath(root, 'data')), { code: 0, stderr: '', stdout: '[]\n' });
});

test('revoke: confirmation, --json, and exit 1 for twice or unknown ids', async () => {
  const dir = seededDir();
  assert.deepEqual(await run(['revoke', 'key_AAAAAAAAAAAAAAAA'], dir), {
    code: 0,
    stderr: '',
    stdout: 'Revoked API key key_AAAAAAAAAAAAAAAA ("my app", prefix pcl_AbC1x9Qz).\nRunning servers refuse it within 1 second.\n',
  });
  assert.deepEqual(await run(['revoke', 'key_AAAAAAAAAAAAAAAA'], dir), {
    code: 1,
    stdout: '',
    stderr: `portcullis keys revoke: API key 'key_AAAAAAAAAAAAAAAA' was already revoked at ${JSON.parse(readFileSync(path.join(dir, 'keys.json'), 'utf8')).keys[0].revokedAt}.\n`,
  });
  assert.deepEqual(await run(['revoke', 'key_CCCCCCCCCCCCCCCC'], dir), {
    code: 1,
    stdout: '',
    stderr: 'portcullis keys revoke: No API key has the id \'key_CCCCCCCCCCCCCCCC\'. Run "portcullis keys list" to see the ids.\n',
  });
  const pasted = await run(['revoke', KEY_A], dir);
  assert.equal(pasted.code, 1);
  assert.equal(pasted.stderr.includes(KEY_A), false, 'a pasted key is not echoed');

  const fresh = seededDir();
  const { code, stdout } = await run(['revoke', '--json', 'key_AAAAAAAAAAAAAAAA'], fresh);
  assert.equal(code, 0);
  const printed = JSON.parse(stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(printed), ['id', 'name', 'prefix', 'createdAt', 'revokedAt']);
  assert.equal(printed['name'], 'my app');
  assert.match(String(printed['revokedAt']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test('a corrupt keys.json: exit 1 with the file and problem, file untouched', async () => {
  const dir = freshPath(root, 'data');
  mkdirSync(dir);
  const file = path.join(dir, 'keys.json');
  writeFileSync(file, '{"version":7,"keys":[]}');
  for (const args of [['list'], ['create', '--name', 'x'], ['revoke', 'key_AAAAAAAAAAAAAAAA']]) {
    assert.deepEqual(await run(args, dir), {
      code: 1,
      stdout: '',
      stderr:
        `portcullis keys ${args[0]}: Key store file ${file} is invalid: "version" is 7, this version of portcullis reads version 1 or 2. ` +
        'The file was left untouched; repair it or restore it from a backup.\n',
    });
  }
  assert.equal(readFileSync(file, 'utf8'), '{"version":7,"keys":[]}');
});

test('without a data directory a command that needs the store fails with exit 1', async () => {
  assert.deepEqual(await run(['list'], ''), { code: 1, stdout: '', stderr: 'portcullis keys list: no data directory is configured.\n' });
});

test('unexpected errors are not swallowed', async () => {
  const dir = freshPath(root, 'data');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'keys.json'), '{"version":1,"keys":[]}');
  const stdout = new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
  // A stream whose write throws synchronously stands in for a bug outside the store.
  stdout.write = () => {
    throw new TypeError('broken stream');
  };
  await assert.rejects(runKeysCommand(['list'], { dataDir: dir, stdout, stderr: sink().stream, audit: recordingAuditTrail() }), /broken stream/);
});

test('keys usage: per-key totals from usage.json joined with the key list', async () => {
  const dir = freshDir(root);
  const created = await run(['create', '--name', 'metered', '--json'], dir);
  const { id } = JSON.parse(created.stdout) as { id: string };
  const empty = await run(['usage', '--json'], dir);
  assert.equal(empty.code, 0);
  assert.deepEqual(JSON.parse(empty.stdout), [
    { id, name: 'metered', prefix: (JSON.parse(created.stdout) as { prefix: string }).prefix, status: 'active', requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 0 },
  ]);
  writeFileSync(path.join(dir, 'usage.json'), JSON.stringify({ version: 1, keys: { [id]: { requests: 3, promptTokens: 30, completionTokens: 12, cachedTokens: 4, errors: 1 } } }));
  const table = await run(['usage'], dir);
  assert.equal(table.code, 0);
  assert.equal(
    table.stdout,
    'ID                    NAME     REQUESTS  PROMPT  COMPLETION  CACHED  ERRORS  COST      STATUS\n' + `${id}  metered  3         30      12          4       1       0.000000  active\n`,
  );
  writeFileSync(path.join(dir, 'usage.json'), 'garbage');
  const bad = await run(['usage'], dir);
  assert.equal(bad.code, 1);
  assert.equal(bad.stderr, `portcullis keys usage: ${path.join(dir, 'usage.json')}: is not valid JSON\n`);
});

// ---- settings, show, update, rotate (keys.json version 2) ----

const LIMITS_ALL = { requestsPerMinute: 60, tokensPerMinute: 100000, concurrentRequests: 4, tokenBudget: { tokens: 2000000, period: 'month' }, costBudget: null };
const RECORD_A = {
  id: 'key_AAAAAAAAAAAAAAAA',
  name: 'my app',
  prefix: 'pcl_AbC1x9Qz',
  hash: hashApiKey(KEY_A),
  createdAt: '2025-01-31T12:00:00.000Z',
  revokedAt: null,
  rotatedAt: null,
  expiresAt: '2099-01-31T00:00:00.000Z',
  allowedAliases: ['gpt-4o', 'fast'],
  limits: LIMITS_ALL,
};
const RECORD_B = {
  id: 'key_BBBBBBBBBBBBBBBB',
  name: 'old ci',
  prefix: 'pcl_00000000',
  hash: hashApiKey(KEY_B),
  createdAt: '2025-01-01T08:30:00.000Z',
  revokedAt: '2025-01-15T00:00:00.000Z',
  rotatedAt: null,
  expiresAt: null,
  allowedAliases: null,
  limits: NO_LIMITS,
};

/** A version 2 keys.json: key A active with every setting, key B revoked with none. */
function seededV2Dir(): string {
  const dir = freshPath(root, 'data');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'keys.json'), JSON.stringify({ version: 2, keys: [RECORD_A, RECORD_B] }, null, 2) + '\n');
  writeFileSync(path.join(dir, 'keys-last-used.json'), JSON.stringify({ version: 1, lastUsed: { key_AAAAAAAAAAAAAAAA: '2025-02-01T09:15:30.123Z' } }));
  return dir;
}

/**
 * keys.json as written, with an unset costBudget put back as null for comparison: the
 * file writes limits.costBudget only when set (checked here on every read).
 */
/** NO_LIMITS as keys.json writes it: costBudget only when set. */
const STORED_NO_LIMITS = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: null };

function keysFile(dir: string): { version: number; keys: Record<string, unknown>[] } {
  const file = JSON.parse(readFileSync(path.join(dir, 'keys.json'), 'utf8')) as { version: number; keys: Record<string, unknown>[] };
  for (const record of file.keys) {
    const limits = record['limits'] as Record<string, unknown> | null | undefined;
    if (limits === null || limits === undefined) continue;
    assert.notEqual(limits['costBudget'], null, 'an unset costBudget is not written');
    if (!('costBudget' in limits)) limits['costBudget'] = null;
  }
  return file;
}

/** Picks the random parts out of create/rotate output so the whole text can be compared exactly. */
function issued(stdout: string): { key: string; id: string; prefix: string; time: string } {
  const m = /^[^\n]*\n\n {2}(pcl_[0-9A-Za-z]{49})\n\nid: +(key_[0-9A-Za-z]{16})\nname: +[^\n]*\nprefix: +(pcl_[0-9A-Za-z]{8})\n(?:created|rotated): (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\n/.exec(stdout);
  assert.ok(m, stdout);
  const [, key, id, prefix, time] = m as unknown as [string, string, string, string, string];
  return { key, id, prefix, time };
}

const SHOW_A =
  'id:        key_AAAAAAAAAAAAAAAA\n' +
  'name:      my app\n' +
  'prefix:    pcl_AbC1x9Qz\n' +
  'status:    active\n' +
  'created:   2025-01-31T12:00:00.000Z\n' +
  'last used: 2025-02-01T09:15:30.123Z\n' +
  'expires:   2099-01-31T00:00:00.000Z\n' +
  'aliases:   gpt-4o, fast\n' +
  'limits:    60 rpm, 100000 tpm, 4 at once, 2000000 tokens/month\n';
/** What `keys show` adds for a key without recorded usage. */
const NO_USAGE = 'usage:     none recorded\n';

test('create with every settings flag: exact output and the exact stored record', async () => {
  const dir = freshPath(root, 'data');
  const args = ['create', '--name', 'full', '--allow', ' gpt-4o , fast ', '--expires', '2099-01-31T02:00:00+02:00', '--rpm', '60', '--tpm', '100000', '--concurrency', '4', '--budget', '2000000/month'];
  const { code, stdout, stderr } = await run(args, dir);
  assert.equal(stderr, '');
  assert.equal(code, 0);
  const { key, id, prefix, time } = issued(stdout);
  assert.equal(
    stdout,
    'API key created. Copy it now: it cannot be shown again.\n\n' +
      `  ${key}\n\n` +
      `id:      ${id}\n` +
      'name:    full\n' +
      `prefix:  ${prefix}\n` +
      `created: ${time}\n` +
      'expires: 2099-01-31T00:00:00.000Z\n' +
      'aliases: gpt-4o, fast\n' +
      'limits:  60 rpm, 100000 tpm, 4 at once, 2000000 tokens/month\n\n' +
      'Clients send it in the header "Authorization: Bearer <key>".\n',
  );
  assert.equal(prefix, key.slice(0, 12));
  assert.deepEqual(keysFile(dir), {
    version: 2,
    keys: [{ id, name: 'full', prefix, hash: hashApiKey(key), createdAt: time, revokedAt: null, rotatedAt: null, expiresAt: '2099-01-31T00:00:00.000Z', allowedAliases: ['gpt-4o', 'fast'], limits: LIMITS_ALL }],
  });
});

test('create with some limits: unnamed limits stay null, "none" and "all"/"never" are the defaults', async () => {
  const dir = freshPath(root, 'data');
  const budget = await run(['create', '--name', 'daily', '--budget', '50000/day', '--rpm', 'none', '--allow', 'all', '--expires', 'never', '--json'], dir);
  assert.equal(budget.code, 0);
  const printed = JSON.parse(budget.stdout) as Record<string, string>;
  const { id, prefix, createdAt, key } = printed as Record<string, string>;
  const limits = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null, tokenBudget: { tokens: 50000, period: 'day' }, costBudget: null };
  assert.equal(budget.stdout, JSON.stringify({ id, name: 'daily', prefix, createdAt, expiresAt: null, allowedAliases: null, limits, guard: null, key }, null, 2) + '\n');
  assert.deepEqual(keysFile(dir).keys, [{ id, name: 'daily', prefix, hash: hashApiKey(String(key)), createdAt, revokedAt: null, rotatedAt: null, expiresAt: null, allowedAliases: null, limits }]);

  const text = await run(['create', '--name', 'two', '--concurrency', '2', '--tpm', '9000'], dir);
  assert.equal(text.code, 0);
  const second = issued(text.stdout);
  assert.equal(
    text.stdout,
    'API key created. Copy it now: it cannot be shown again.\n\n' +
      `  ${second.key}\n\nid:      ${second.id}\nname:    two\nprefix:  ${second.prefix}\ncreated: ${second.time}\n` +
      'limits:  9000 tpm, 2 at once\n\n' +
      'Clients send it in the header "Authorization: Bearer <key>".\n',
  );
});

test('bad settings values: exit 2 with the exact message, nothing stored', async () => {
  const dir = freshPath(root, 'data');
  const hint = 'Run "portcullis keys create --help" for usage.\n';
  const cases: [string[], string][] = [
    [['--rpm', 'abc'], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--rpm', ''], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--rpm=-1'], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--rpm', '-1'], "option '--rpm' needs a value (write --rpm=VALUE for a value starting with '-')"],
    [['--tpm', '1.5'], '--tpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--concurrency', '1e3'], '--concurrency must be a whole number from 1 to 1000000000, or "none"'],
    [['--rpm', '12345678901234'], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--rpm', '0'], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--concurrency', '2000000000'], '--concurrency must be a whole number from 1 to 1000000000, or "none"'],
    [['--budget', '5/week'], '--budget must look like 2000000/month or 50000/day, or be "none"'],
    [['--budget', '5000'], '--budget must look like 2000000/month or 50000/day, or be "none"'],
    [['--budget', '5000/Month'], '--budget must look like 2000000/month or 50000/day, or be "none"'],
    [['--budget', '0/day'], '--budget must be a whole number from 1 to 1000000000000, or "none"'],
    [['--expires', '2099-02-30T00:00:00Z'], '--expires is not a real date and time'],
    [['--expires', '2099-01-31T24:00:00Z'], '--expires is not a real date and time'],
    [['--allow', 'service-chat,service-auto'], "--allow: 'service-auto' is always allowed when the alias it resolves to is; list concrete aliases"],
    [['--expires', 'yesterday'], '--expires must be "never" or an ISO 8601 time with a zone, like 2027-01-31T00:00:00Z'],
    [['--expires', '2099-01-31'], '--expires must be "never" or an ISO 8601 time with a zone, like 2027-01-31T00:00:00Z'],
    [['--expires', '2099-01-31T00:00:00'], '--expires must be "never" or an ISO 8601 time with a zone, like 2027-01-31T00:00:00Z'],
    [['--expires', '2020-01-01T00:00:00Z'], '--expires is in the past'],
    [['--expires', '3000-01-01T00:00:00Z'], '--expires must be within 100 years'],
    [['--allow', ''], '--allow must name at least one alias (a key allowed nothing is a revoked key)'],
    [['--allow', ' , '], '--allow must name at least one alias (a key allowed nothing is a revoked key)'],
    [['--allow', 'gpt,gpt'], "--allow: 'gpt' is listed twice"],
    [['--allow', 'gpt,bad alias'], '--allow: "bad alias" is not an alias name'],
  ];
  for (const [flags, message] of cases) {
    assert.deepEqual(await run(['create', '--name', 'x', ...flags], dir), { code: 2, stdout: '', stderr: `portcullis keys create: ${message}\n${hint}` }, flags.join(' '));
  }
  assert.equal(existsSync(path.join(dir, 'keys.json')), false, 'nothing was created');
});

test('show: every setting, last use and status as text; never the key or its hash', async () => {
  const dir = seededV2Dir();
  assert.deepEqual(await run(['show', 'key_AAAAAAAAAAAAAAAA'], dir), { code: 0, stderr: '', stdout: SHOW_A + NO_USAGE });
  assert.deepEqual(await run(['show', 'key_BBBBBBBBBBBBBBBB'], dir), {
    code: 0,
    stderr: '',
    stdout:
      'id:        key_BBBBBBBBBBBBBBBB\n' +
      'name:      old ci\n' +
      'prefix:    pcl_00000000\n' +
      'status:    revoked\n' +
      'created:   2025-01-01T08:30:00.000Z\n' +
      'revoked:   2025-01-15T00:00:00.000Z\n' +
      'last used: never\n' +
      'expires:   never\n' +
      'aliases:   all\n' +
      'limits:    none\n' +
      NO_USAGE,
  });
  // Status follows the clock: one millisecond after the expiry the key shows as expired.
  const expired = await run(['show', 'key_AAAAAAAAAAAAAAAA'], dir, Date.parse('2099-01-31T00:00:00.001Z'));
  assert.deepEqual(expired, { code: 0, stderr: '', stdout: SHOW_A.replace('status:    active', 'status:    expired') + NO_USAGE });
  const atExpiry = await run(['show', 'key_AAAAAAAAAAAAAAAA'], dir, Date.parse('2099-01-31T00:00:00.000Z'));
  assert.equal(atExpiry.stdout, expired.stdout, 'a key is expired from its expiresAt on');
  for (const out of [expired.stdout, SHOW_A]) {
    assert.equal(out.includes(KEY_A) || out.includes(RECORD_A.hash), false);
  }
});

test('show --json: the record without its hash, with lastUsedAt and status', async () => {
  const dir = seededV2Dir();
  const { code, stdout, stderr } = await run(['show', '--json', 'key_AAAAAAAAAAAAAAAA'], dir);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  const { id, name, prefix, createdAt, revokedAt, rotatedAt, allowedAliases, expiresAt, limits } = RECORD_A;
  const shown = { id, name, prefix, createdAt, revokedAt, rotatedAt, allowedAliases, expiresAt, limits, guard: null, lastUsedAt: '2025-02-01T09:15:30.123Z', status: 'active' };
  assert.equal(stdout, JSON.stringify(shown, null, 2) + '\n');
  assert.equal(stdout.includes(RECORD_A.hash) || stdout.includes('"hash"') || stdout.includes(KEY_A), false);
});

test('show: unknown id is exit 1 with a message; a pasted key is not echoed', async () => {
  const dir = seededV2Dir();
  assert.deepEqual(await run(['show', 'key_CCCCCCCCCCCCCCCC'], dir), {
    code: 1,
    stdout: '',
    stderr: 'portcullis keys show: No API key has the id \'key_CCCCCCCCCCCCCCCC\'. Run "portcullis keys list" to see the ids.\n',
  });
  assert.deepEqual(await run(['show', KEY_A], dir), {
    code: 1,
    stdout: '',
    stderr: 'portcullis keys show: No API key has that id (ids look like key_ followed by 16 letters or digits). Run "portcullis keys list" to see the ids.\n',
  });
});

test('update changes only what was given, merging limits with the current ones', async () => {
  const dir = seededV2Dir();
  const { code, stdout, stderr } = await run(['update', 'key_AAAAAAAAAAAAAAAA', '--rpm', '120'], dir);
  assert.equal(stderr, '');
  assert.equal(code, 0);
  const limits = { ...LIMITS_ALL, requestsPerMinute: 120 };
  assert.equal(
    stdout,
    'Updated API key key_AAAAAAAAAAAAAAAA. Running servers apply it within 1 second.\n\n' +
      SHOW_A.replace('last used: 2025-02-01T09:15:30.123Z\n', '').replace('limits:    60 rpm,', 'limits:    120 rpm,'),
  );
  assert.deepEqual(keysFile(dir), { version: 2, keys: [{ ...RECORD_A, limits }, RECORD_B] });

  assert.equal((await run(['update', 'key_AAAAAAAAAAAAAAAA', '--name', ' renamed ', '--allow', 'fast', '--budget', '10/day'], dir)).code, 0);
  assert.deepEqual(keysFile(dir), {
    version: 2,
    keys: [{ ...RECORD_A, name: 'renamed', allowedAliases: ['fast'], limits: { ...limits, tokenBudget: { tokens: 10, period: 'day' } } }, RECORD_B],
  });
});

test('update: --allow all, --expires never and "none" clear settings', async () => {
  const dir = seededV2Dir();
  const first = await run(['update', 'key_AAAAAAAAAAAAAAAA', '--allow', 'all', '--expires', 'never', '--rpm', 'none', '--budget', 'none'], dir);
  assert.equal(first.code, 0);
  assert.equal(
    first.stdout,
    'Updated API key key_AAAAAAAAAAAAAAAA. Running servers apply it within 1 second.\n\n' +
      'id:        key_AAAAAAAAAAAAAAAA\n' +
      'name:      my app\n' +
      'prefix:    pcl_AbC1x9Qz\n' +
      'status:    active\n' +
      'created:   2025-01-31T12:00:00.000Z\n' +
      'expires:   never\n' +
      'aliases:   all\n' +
      'limits:    100000 tpm, 4 at once\n',
  );
  const partly = { requestsPerMinute: null, tokensPerMinute: 100000, concurrentRequests: 4, tokenBudget: null, costBudget: null };
  assert.deepEqual(keysFile(dir).keys[0], { ...RECORD_A, expiresAt: null, allowedAliases: null, limits: partly });

  const second = await run(['update', 'key_AAAAAAAAAAAAAAAA', '--tpm', 'none', '--concurrency', 'none', '--json'], dir);
  assert.equal(second.code, 0);
  const { id, name, prefix, createdAt, revokedAt, rotatedAt } = RECORD_A;
  const updated = { id, name, prefix, createdAt, revokedAt, rotatedAt, allowedAliases: null, expiresAt: null, limits: NO_LIMITS, guard: null, status: 'active' };
  assert.equal(second.stdout, JSON.stringify(updated, null, 2) + '\n');
  assert.deepEqual(keysFile(dir).keys[0], { ...RECORD_A, expiresAt: null, allowedAliases: null, limits: NO_LIMITS });
});

test('update: a past expiry is allowed and expires the key at once', async () => {
  const dir = seededV2Dir();
  const { code, stdout } = await run(['update', 'key_AAAAAAAAAAAAAAAA', '--expires', '2026-05-31T23:59:59Z'], dir);
  assert.equal(code, 0);
  assert.equal(
    stdout,
    'Updated API key key_AAAAAAAAAAAAAAAA. Running servers apply it within 1 second.\n\n' +
      SHOW_A.replace('last used: 2025-02-01T09:15:30.123Z\n', '').replace('status:    active', 'status:    expired').replace('2099-01-31T00:00:00.000Z', '2026-05-31T23:59:59.000Z'),
  );
  assert.equal(keysFile(dir).keys[0]?.['expiresAt'], '2026-05-31T23:59:59.000Z');
});

test('update refusals: nothing to change and bad values exit 2; unknown or revoked ids exit 1; the file is untouched', async () => {
  const dir = seededV2Dir();
  const before = readFileSync(path.join(dir, 'keys.json'), 'utf8');
  const hint = 'Run "portcullis keys update --help" for usage.\n';
  const cases: [string[], { code: number; stdout: string; stderr: string }][] = [
    [['update', 'key_AAAAAAAAAAAAAAAA'], { code: 2, stdout: '', stderr: `portcullis keys update: nothing to change: give --name or a setting\n${hint}` }],
    [['update', 'key_AAAAAAAAAAAAAAAA', '--json'], { code: 2, stdout: '', stderr: `portcullis keys update: nothing to change: give --name or a setting\n${hint}` }],
    [['update', 'key_AAAAAAAAAAAAAAAA', '--rpm', 'abc'], { code: 2, stdout: '', stderr: `portcullis keys update: --rpm must be a whole number from 1 to 1000000000, or "none"\n${hint}` }],
    [['update', 'key_AAAAAAAAAAAAAAAA', '--budget', '5/week'], { code: 2, stdout: '', stderr: `portcullis keys update: --budget must look like 2000000/month or 50000/day, or be "none"\n${hint}` }],
    [['update', 'key_AAAAAAAAAAAAAAAA', '--expires', 'yesterday'], { code: 2, stdout: '', stderr: `portcullis keys update: --expires must be "never" or an ISO 8601 time with a zone, like 2027-01-31T00:00:00Z\n${hint}` }],
    [['update', 'key_AAAAAAAAAAAAAAAA', '--allow', ''], { code: 2, stdout: '', stderr: `portcullis keys update: --allow must name at least one alias (a key allowed nothing is a revoked key)\n${hint}` }],
    [['update', 'key_AAAAAAAAAAAAAAAA', '--name', '  '], { code: 2, stdout: '', stderr: `portcullis keys update: --name: it is empty\n${hint}` }],
    [['update', 'key_CCCCCCCCCCCCCCCC', '--rpm', '5'], { code: 1, stdout: '', stderr: 'portcullis keys update: No API key has the id \'key_CCCCCCCCCCCCCCCC\'. Run "portcullis keys list" to see the ids.\n' }],
    [['update', KEY_A, '--rpm', '5'], { code: 1, stdout: '', stderr: 'portcullis keys update: No API key has that id (ids look like key_ followed by 16 letters or digits). Run "portcullis keys list" to see the ids.\n' }],
    [['update', 'key_BBBBBBBBBBBBBBBB', '--rpm', '5'], { code: 1, stdout: '', stderr: 'portcullis keys update: Key key_BBBBBBBBBBBBBBBB is revoked; create a new key instead.\n' }],
    [['update', 'key_BBBBBBBBBBBBBBBB', '--name', 'back'], { code: 1, stdout: '', stderr: 'portcullis keys update: Key key_BBBBBBBBBBBBBBBB is revoked; create a new key instead.\n' }],
  ];
  for (const [args, expected] of cases) assert.deepEqual(await run(args, dir), expected, args.join(' '));
  assert.equal(readFileSync(path.join(dir, 'keys.json'), 'utf8'), before);
});

test('update rewrites a version 1 keys.json as version 2, other keys with default settings', async () => {
  const dir = seededDir();
  assert.equal((await run(['update', 'key_AAAAAAAAAAAAAAAA', '--concurrency', '3'], dir)).code, 0);
  assert.deepEqual(keysFile(dir), {
    version: 2,
    keys: [
      { ...RECORD_A, expiresAt: null, allowedAliases: null, limits: { ...NO_LIMITS, concurrentRequests: 3 } },
      RECORD_B,
    ],
  });
});

test('rotate: the new key printed exactly once, same id and settings; the old key stops authenticating', async () => {
  const dir = seededV2Dir();
  // A server's store opened before the rotation: it must drop the old secret too.
  const server = openKeyStore(dir, { watch: false, reloadIntervalMs: 0 });
  try {
    assert.equal(server.authenticate(KEY_A)?.id, 'key_AAAAAAAAAAAAAAAA');
    const { code, stdout, stderr } = await run(['rotate', 'key_AAAAAAAAAAAAAAAA'], dir);
    assert.equal(stderr, '');
    assert.equal(code, 0);
    const { key, id, prefix, time } = issued(stdout);
    assert.equal(id, 'key_AAAAAAAAAAAAAAAA');
    assert.equal(
      stdout,
      'New secret for the key. Copy it now: it cannot be shown again.\n\n' +
        `  ${key}\n\n` +
        'id:      key_AAAAAAAAAAAAAAAA\n' +
        'name:    my app\n' +
        `prefix:  ${prefix}\n` +
        `rotated: ${time}\n\n` +
        'The old secret stops working within 1 second.\n',
    );
    assert.equal(stdout.split(key).length, 2, 'the key appears exactly once');
    assert.notEqual(key, KEY_A);
    assert.equal(prefix, key.slice(0, 12));
    const rotated = { ...RECORD_A, prefix, hash: hashApiKey(key), rotatedAt: time };
    assert.deepEqual(keysFile(dir), { version: 2, keys: [rotated, RECORD_B] });

    assert.equal(server.authenticate(KEY_A), null);
    // A record read back has every setting; keys.json leaves out an unset guard.
    assert.deepEqual(server.authenticate(key), { ...rotated, guard: null });
    const fresh = openKeyStore(dir, { watch: false });
    try {
      assert.equal(fresh.authenticate(KEY_A), null);
      assert.deepEqual(fresh.authenticate(key), { ...rotated, guard: null });
    } finally {
      await fresh.close();
    }
    // show says when; the key itself is never shown again.
    const shown = await run(['show', 'key_AAAAAAAAAAAAAAAA'], dir);
    assert.equal(shown.stdout, SHOW_A.replace('pcl_AbC1x9Qz', prefix).replace('created:   2025-01-31T12:00:00.000Z\n', `created:   2025-01-31T12:00:00.000Z\nrotated:   ${time}\n`) + NO_USAGE);
    assert.equal(shown.stdout.includes(key), false);
  } finally {
    await server.close();
  }
});

test('rotate --json prints {id,name,prefix,rotatedAt,key}; usage history stays with the id', async () => {
  const dir = seededV2Dir();
  writeFileSync(path.join(dir, 'usage.json'), JSON.stringify({ version: 1, keys: { key_AAAAAAAAAAAAAAAA: { requests: 3, promptTokens: 30, completionTokens: 12, cachedTokens: 4, errors: 1 } } }));
  const { code, stdout, stderr } = await run(['rotate', '--json', 'key_AAAAAAAAAAAAAAAA'], dir);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  const printed = JSON.parse(stdout) as Record<string, string>;
  const { prefix, rotatedAt, key } = printed as Record<string, string>;
  assert.equal(stdout, JSON.stringify({ id: 'key_AAAAAAAAAAAAAAAA', name: 'my app', prefix, rotatedAt, key }, null, 2) + '\n');
  assert.deepEqual(keysFile(dir).keys[0], { ...RECORD_A, prefix, hash: hashApiKey(String(key)), rotatedAt });
  const usage = JSON.parse((await run(['usage', '--json'], dir)).stdout) as Record<string, unknown>[];
  assert.deepEqual(usage[0], { id: 'key_AAAAAAAAAAAAAAAA', name: 'my app', prefix, status: 'active', requests: 3, promptTokens: 30, completionTokens: 12, cachedTokens: 4, errors: 1, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 0 });
});

test('rotate refusals: revoked or unknown ids exit 1 and the file is untouched', async () => {
  const dir = seededV2Dir();
  const before = readFileSync(path.join(dir, 'keys.json'), 'utf8');
  assert.deepEqual(await run(['rotate', 'key_BBBBBBBBBBBBBBBB'], dir), {
    code: 1,
    stdout: '',
    stderr: 'portcullis keys rotate: Key key_BBBBBBBBBBBBBBBB is revoked; create a new key instead.\n',
  });
  assert.deepEqual(await run(['rotate', 'key_CCCCCCCCCCCCCCCC', '--json'], dir), {
    code: 1,
    stdout: '',
    stderr: 'portcullis keys rotate: No API key has the id \'key_CCCCCCCCCCCCCCCC\'. Run "portcullis keys list" to see the ids.\n',
  });
  assert.equal(readFileSync(path.join(dir, 'keys.json'), 'utf8'), before);
});

test('keys usage reads the version 2 usage.json (totals, hourly and daily buckets)', async () => {
  const dir = seededV2Dir();
  const counters = (requests: number) => ({ requests, promptTokens: requests * 10, completionTokens: requests * 4, cachedTokens: requests, errors: 1 });
  writeFileSync(
    path.join(dir, 'usage.json'),
    JSON.stringify({
      version: 2,
      keys: { key_AAAAAAAAAAAAAAAA: { totals: counters(12), hours: { '2025-02-01T09': counters(2) }, days: { '2025-02-01': counters(2) } } },
    }),
  );
  assert.deepEqual(await run(['usage'], dir), {
    code: 0,
    stderr: '',
    stdout:
      'ID                    NAME    REQUESTS  PROMPT  COMPLETION  CACHED  ERRORS  COST      STATUS\n' +
      'key_AAAAAAAAAAAAAAAA  my app  12        120     48          12      1       0.000000  active\n' +
      'key_BBBBBBBBBBBBBBBB  old ci  0         0       0           0       0       0.000000  revoked\n',
  });
  assert.deepEqual(await run(['usage', '--json'], dir), {
    code: 0,
    stderr: '',
    stdout:
      JSON.stringify(
        [
          { id: 'key_AAAAAAAAAAAAAAAA', name: 'my app', prefix: 'pcl_AbC1x9Qz', status: 'active', ...counters(12), costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 0 },
          { id: 'key_BBBBBBBBBBBBBBBB', name: 'old ci', prefix: 'pcl_00000000', status: 'revoked', requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0, costNanos: 0, guardBlocked: 0, guardMasked: 0, guardLogged: 0, cost: 0 },
        ],
        null,
        2,
      ) + '\n',
  });
  writeFileSync(path.join(dir, 'usage.json'), JSON.stringify({ version: 2, keys: { key_AAAAAAAAAAAAAAAA: { totals: counters(1), hours: { '2025-02-01': counters(1) }, days: {} } } }));
  assert.deepEqual(await run(['usage'], dir), {
    code: 1,
    stdout: '',
    stderr: `portcullis keys usage: ${path.join(dir, 'usage.json')}: keys.key_AAAAAAAAAAAAAAAA.hours has a bucket "2025-02-01" that is not a UTC hour (YYYY-MM-DDTHH)\n`,
  });
  writeFileSync(path.join(dir, 'usage.json'), JSON.stringify({ version: 3, keys: {} }));
  assert.deepEqual(await run(['usage'], dir), { code: 1, stdout: '', stderr: `portcullis keys usage: ${path.join(dir, 'usage.json')}: expected {"version":2,"keys":{...}}\n` });
});
