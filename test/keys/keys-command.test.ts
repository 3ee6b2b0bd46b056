import { NO_LIMITS } from '../../src/limits/key-limits.ts';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { KEYS_USAGE, runKeysCommand } from '../../src/cli/keys-command.ts';
import { hashApiKey } from '../../src/keys/api-key.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'portcullis-keys-cli-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
function freshDir(): string {
  return path.join(root, `data-${counter++}`);
}

function sink(): { stream: Writable; text(): string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

async function run(args: string[], dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const code = await runKeysCommand(args, { dataDir, stdout: stdout.stream, stderr: stderr.stream });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const KEY_A = 'pcl_AbC1x9QzAbC1x9QzAbC1x9QzAbC1x9QzAbC1x9QzAbC1FZajM';
const KEY_B = 'pcl_00000000000000000000000000000000000000000002CZclj';

/** A data directory holding two known keys (one revoked) and a last-used file. */
function seededDir(): string {
  const dir = freshDir();
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

test('keys --help, -h and help print the usage on stdout and exit 0', async () => {
  assert.equal(
    KEYS_USAGE,
    'Usage: portcullis keys <command> [options]\n\n' +
      'Manage the API keys clients send as "Authorization: Bearer <key>".\n\n' +
      'Commands:\n' +
      '  create --name NAME   Create a key and print it once\n' +
      '  list                 List keys with their status and last use (never the keys)\n' +
      '  revoke ID            Revoke a key by id\n' +
      '  usage                Requests, tokens and errors per key\n\n' +
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
      'Usage: portcullis keys create --name NAME [--json]\n\n' +
      'Create an API key. The key is printed once and cannot be shown again:\n' +
      'only its SHA-256 hash is stored.\n\n' +
      'Options:\n' +
      '  --name NAME   A label for the key, 1 to 64 printable characters (required)\n' +
      '  --json        Print {"id","name","prefix","createdAt","key"} as JSON\n' +
      '  -h, --help    Show this help\n',
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
  const dir = freshDir();
  assert.equal((await run(['create', '--name', 'x', '--help'], dir)).code, 0);
  assert.equal(existsSync(dir), false, 'help does not create the data directory');
});

test('command line problems: message naming the problem, usage hint, exit 2', async () => {
  const dir = freshDir();
  const cases: [string[], string][] = [
    [[], 'portcullis keys: missing command (create, list, revoke or usage)\nRun "portcullis keys --help" for usage.\n'],
    [['rotate'], 'portcullis keys: unknown command \'rotate\'\nRun "portcullis keys --help" for usage.\n'],
    [['--verbose'], 'portcullis keys: unknown option \'--verbose\'\nRun "portcullis keys --help" for usage.\n'],
    [['create'], 'portcullis keys create: missing required option \'--name NAME\'\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name'], 'portcullis keys create: option \'--name\' needs a value (write --name=VALUE for a value starting with \'-\')\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name', '--json'], 'portcullis keys create: option \'--name\' needs a value (write --name=VALUE for a value starting with \'-\')\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name', 'a', '--scope', 'all'], 'portcullis keys create: unknown option \'--scope\'\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '-n', 'a'], 'portcullis keys create: unknown option \'-n\'\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name', 'a', 'extra'], 'portcullis keys create: unexpected argument \'extra\'\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name', '   '], 'portcullis keys create: Invalid key name: it is empty.\nRun "portcullis keys create --help" for usage.\n'],
    [['create', '--name', 'x'.repeat(65)], 'portcullis keys create: Invalid key name: it has 65 characters, the limit is 64.\nRun "portcullis keys create --help" for usage.\n'],
    [['list', 'all'], 'portcullis keys list: unexpected argument \'all\'\nRun "portcullis keys list --help" for usage.\n'],
    [['list', '--json=yes'], 'portcullis keys list: option \'--json\' does not take a value\nRun "portcullis keys list --help" for usage.\n'],
    [['revoke'], 'portcullis keys revoke: missing key ID\nRun "portcullis keys revoke --help" for usage.\n'],
    [['revoke', 'key_AAAAAAAAAAAAAAAA', 'key_BBBBBBBBBBBBBBBB'], 'portcullis keys revoke: expected one key ID, got 2\nRun "portcullis keys revoke --help" for usage.\n'],
  ];
  for (const [args, stderr] of cases) {
    assert.deepEqual(await run(args, dir), { code: 2, stdout: '', stderr }, args.join(' '));
  }
  assert.equal(existsSync(path.join(dir, 'keys.json')), false, 'nothing was created');
});

test('create prints the key once with its id and prefix, and stores only its hash', async () => {
  const dir = freshDir();
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
    keys: [{ id, name: 'my app', prefix, hash: hashApiKey(key), createdAt, revokedAt: null, rotatedAt: null, expiresAt: null, allowedAliases: null, limits: NO_LIMITS }],
  });
});

test('create --json prints {id,name,prefix,createdAt,key}', async () => {
  const dir = freshDir();
  const { code, stdout, stderr } = await run(['create', '--json', '--name=ci bot'], dir);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  const printed = JSON.parse(stdout) as Record<string, string>;
  assert.deepEqual(Object.keys(printed), ['id', 'name', 'prefix', 'createdAt', 'key']);
  assert.equal(printed['name'], 'ci bot');
  assert.equal(stdout, JSON.stringify(printed, null, 2) + '\n');
  const listed = JSON.parse((await run(['list', '--json'], dir)).stdout) as Record<string, unknown>[];
  assert.deepEqual(listed, [
    { id: printed['id'], name: 'ci bot', prefix: printed['prefix'], createdAt: printed['createdAt'], revokedAt: null, lastUsedAt: null, status: 'active' },
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

test('list --json prints an array for scripts', async () => {
  const dir = seededDir();
  const { code, stdout, stderr } = await run(['list', '--json'], dir);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  assert.equal(
    stdout,
    JSON.stringify(
      [
        { id: 'key_AAAAAAAAAAAAAAAA', name: 'my app', prefix: 'pcl_AbC1x9Qz', createdAt: '2025-01-31T12:00:00.000Z', revokedAt: null, lastUsedAt: '2025-02-01T09:15:30.123Z', status: 'active' },
        { id: 'key_BBBBBBBBBBBBBBBB', name: 'old ci', prefix: 'pcl_00000000', createdAt: '2025-01-01T08:30:00.000Z', revokedAt: '2025-01-15T00:00:00.000Z', lastUsedAt: null, status: 'revoked' },
      ],
      null,
      2,
    ) + '\n',
  );
  assert.equal(stdout.includes('hash'), false);
});

test('list of an empty store says how to create a key', async () => {
  assert.deepEqual(await run(['list'], freshDir()), {
    code: 0,
    stderr: '',
    stdout: 'No API keys yet. Create one with: portcullis keys create --name NAME\n',
  });
  assert.deepEqual(await run(['list', '--json'], freshDir()), { code: 0, stderr: '', stdout: '[]\n' });
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
  const dir = freshDir();
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
  const dir = freshDir();
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
  await assert.rejects(runKeysCommand(['list'], { dataDir: dir, stdout, stderr: sink().stream }), /broken stream/);
});

test('keys usage: per-key totals from usage.json joined with the key list', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-keys-usage-'));
  try {
    const created = await run(['create', '--name', 'metered', '--json'], dir);
    const { id } = JSON.parse(created.stdout) as { id: string };
    const empty = await run(['usage', '--json'], dir);
    assert.equal(empty.code, 0);
    assert.deepEqual(JSON.parse(empty.stdout), [
      { id, name: 'metered', prefix: (JSON.parse(created.stdout) as { prefix: string }).prefix, status: 'active', requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0 },
    ]);
    writeFileSync(path.join(dir, 'usage.json'), JSON.stringify({ version: 1, keys: { [id]: { requests: 3, promptTokens: 30, completionTokens: 12, cachedTokens: 4, errors: 1 } } }));
    const table = await run(['usage'], dir);
    assert.equal(table.code, 0);
    assert.equal(
      table.stdout,
      'ID                    NAME     REQUESTS  PROMPT  COMPLETION  CACHED  ERRORS  STATUS\n' + `${id}  metered  3         30      12          4       1       active\n`,
    );
    writeFileSync(path.join(dir, 'usage.json'), 'garbage');
    const bad = await run(['usage'], dir);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, `portcullis keys usage: ${path.join(dir, 'usage.json')}: is not valid JSON\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
