import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { readAdminCredentials, setAdminPassword } from '../../src/admin/admin-credentials.ts';
import { verifyPassword, type ScryptParams } from '../../src/admin/password-hash.ts';
import {
  ADMIN_USAGE,
  feedHiddenLine,
  LineOutcome,
  PASSWORD_SET_NOTE,
  PBKDF2_KEPT_NOTE,
  runAdminCommand,
  SET_PASSWORD_USAGE,
  type PasswordInput,
} from '../../src/cli/admin-command.ts';
import { recordingAuditTrail } from '../admin/recording-audit-trail.ts';
import { sink } from '../support/collect.ts';
import { freshPath, tempDir } from '../support/temp-dir.ts';

const FAST: ScryptParams = { cost: 1024, blockSize: 8, parallelization: 1 };
const CLOCK = () => new Date('2025-02-01T09:15:30.123Z');

const root = tempDir('admin-cli');

/** A piped stdin that carries `input` then ends. */
function pipe(input: string | Buffer): PasswordInput {
  const stream = new PassThrough();
  stream.end(input);
  return stream;
}

async function run(args: string[], dataDir: string, stdin: PasswordInput = pipe(''), onStderr?: (text: string) => void) {
  const stdout = sink();
  const stderr = sink(onStderr);
  const code = await runAdminCommand(args, { dataDir, stdin, stdout: stdout.stream, stderr: stderr.stream, clock: CLOCK, scrypt: FAST, audit: recordingAuditTrail() });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

function doneOutput(dir: string): string {
  return `Admin password set at 2025-02-01T09:15:30.123Z (a scrypt hash in ${path.join(path.resolve(dir), 'admin.json')}).\n` + PASSWORD_SET_NOTE;
}

/**
 * A fake terminal: each time a prompt ending in ': ' is written to stderr, the next
 * answer is typed into stdin. Records raw mode switches.
 */
function terminal(answers: string[]): { stdin: PasswordInput; rawModes: boolean[]; onStderr: (text: string) => void } {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  const rawModes: boolean[] = [];
  stream.isTTY = true;
  stream.setRawMode = (mode: boolean) => {
    rawModes.push(mode);
    return stream;
  };
  const queue = [...answers];
  const onStderr = (text: string): void => {
    if (!text.endsWith(': ')) return;
    const next = queue.shift();
    if (next !== undefined) setImmediate(() => stream.write(next));
  };
  return { stdin: stream, rawModes, onStderr };
}

test('admin --help, -h and help print the usage', async () => {
  assert.equal(
    ADMIN_USAGE,
    'Usage: portcullis admin <command> [options]\n\n' +
      'Manage access to the dashboard.\n\n' +
      'Commands:\n' +
      '  set-password   Set the dashboard admin password (read from standard input)\n' +
      '  tokens         Create, list and revoke admin API tokens (for scripts and CI)\n\n' +
      'Options:\n' +
      '  -h, --help     Show this help; "portcullis admin <command> --help" for a command\n',
  );
  for (const flag of ['--help', '-h', 'help']) assert.deepEqual(await run([flag], ''), { code: 0, stdout: ADMIN_USAGE, stderr: '' });
});

test('set-password --help prints its usage without touching stdin or the data directory', async () => {
  assert.match(SET_PASSWORD_USAGE, /^Usage: portcullis admin set-password\n/);
  assert.match(SET_PASSWORD_USAGE, /printf '%s\\n' "\$ADMIN_PASSWORD" \| portcullis admin set-password\n/);
  assert.deepEqual(await run(['set-password', '--help'], ''), { code: 0, stdout: SET_PASSWORD_USAGE, stderr: '' });
  assert.deepEqual(await run(['set-password', '--bogus', '-h'], ''), { code: 0, stdout: SET_PASSWORD_USAGE, stderr: '' });
});

test('command line errors exit 2 with a hint', async () => {
  assert.deepEqual(await run([], ''), {
    code: 2,
    stdout: '',
    stderr: 'portcullis admin: missing command (set-password or tokens)\nRun "portcullis admin --help" for usage.\n',
  });
  assert.deepEqual(await run(['frob'], ''), {
    code: 2,
    stdout: '',
    stderr: 'portcullis admin: unknown command \'frob\'\nRun "portcullis admin --help" for usage.\n',
  });
  assert.deepEqual(await run(['--frob'], ''), {
    code: 2,
    stdout: '',
    stderr: 'portcullis admin: unknown option \'--frob\'\nRun "portcullis admin --help" for usage.\n',
  });
  const dir = freshPath(root, 'data');
  assert.deepEqual(await run(['set-password', 'hunter2hunter2'], dir), {
    code: 2,
    stdout: '',
    stderr:
      "portcullis admin set-password: unexpected argument 'hunter2hunter2' (the password is read from standard input)\n" +
      'Run "portcullis admin set-password --help" for usage.\n',
  });
  assert.deepEqual(await run(['set-password', '--password=x'], dir), {
    code: 2,
    stdout: '',
    stderr: "portcullis admin set-password: unknown option '--password=x'\nRun \"portcullis admin set-password --help\" for usage.\n",
  });
  assert.equal(existsSync(dir), false);
});

test('set-password reads the first line of a piped stdin and writes admin.json', async () => {
  assert.equal(
    PASSWORD_SET_NOTE,
    'Running servers check the new password at the next login; no restart is needed.\n' +
      'Dashboard sessions opened before the change end at their next request: log in again with the new password.\n',
  );
  const dir = freshPath(root, 'data');
  const result = await run(['set-password'], dir, pipe('correct horse battery\nignored second line\n'));
  assert.deepEqual(result, { code: 0, stdout: doneOutput(dir), stderr: '' });
  const stored = await readAdminCredentials(dir);
  assert.ok(stored !== null);
  assert.equal(stored.updatedAt, '2025-02-01T09:15:30.123Z');
  assert.equal(await verifyPassword('correct horse battery', stored.passwordHash), true);
  if (process.platform !== 'win32') assert.equal(statSync(path.join(dir, 'admin.json')).mode & 0o777, 0o600);
});

test('set-password writes a pbkdf2-sha256 hash when security.passwordHash says so, and says which', async () => {
  const dir = freshPath(root, 'data');
  const stdout = sink();
  const stderr = sink();
  const code = await runAdminCommand(['set-password'], {
    dataDir: dir,
    passwordHash: 'pbkdf2-sha256',
    stdin: pipe('correct horse battery\n'),
    stdout: stdout.stream,
    stderr: stderr.stream,
    clock: CLOCK,
    pbkdf2: { iterations: 1000 },
    audit: recordingAuditTrail(),
  });
  assert.deepEqual({ code, stdout: stdout.text(), stderr: stderr.text() }, {
    code: 0,
    stdout: `Admin password set at 2025-02-01T09:15:30.123Z (a pbkdf2-sha256 hash in ${path.join(path.resolve(dir), 'admin.json')}).\n` + PASSWORD_SET_NOTE,
    stderr: '',
  });
  const stored = await readAdminCredentials(dir);
  assert.match(stored?.passwordHash ?? '', /^pbkdf2-sha256\$1000\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert.equal(await verifyPassword('correct horse battery', stored?.passwordHash ?? ''), true);
});

test('set-password never turns a pbkdf2-sha256 password into scrypt: with security.passwordHash "scrypt" or unset it writes pbkdf2-sha256 and says why', async () => {
  for (const passwordHash of ['scrypt', undefined] as const) {
    const dir = freshPath(root, 'data');
    await setAdminPassword(dir, 'the password before', undefined, { scheme: 'pbkdf2-sha256', pbkdf2: { iterations: 1000 } });
    const stdout = sink();
    const stderr = sink();
    const code = await runAdminCommand(['set-password'], {
      dataDir: dir,
      ...(passwordHash === undefined ? {} : { passwordHash }),
      stdin: pipe('correct horse battery\n'),
      stdout: stdout.stream,
      stderr: stderr.stream,
      clock: CLOCK,
      scrypt: FAST,
      pbkdf2: { iterations: 1000 },
      audit: recordingAuditTrail(),
    });
    assert.deepEqual({ code, stdout: stdout.text(), stderr: stderr.text() }, {
      code: 0,
      stdout: `Admin password set at 2025-02-01T09:15:30.123Z (a pbkdf2-sha256 hash in ${path.join(path.resolve(dir), 'admin.json')}).\n` + PBKDF2_KEPT_NOTE + PASSWORD_SET_NOTE,
      stderr: '',
    }, `passwordHash ${passwordHash}`);
    assert.equal(
      PBKDF2_KEPT_NOTE,
      'The password it replaces was a pbkdf2-sha256 hash, so the new one is too: set-password never turns PBKDF2 into scrypt, whatever security.passwordHash says.\n',
    );
    const stored = await readAdminCredentials(dir);
    assert.match(stored?.passwordHash ?? '', /^pbkdf2-sha256\$1000\$/);
    assert.equal(await verifyPassword('correct horse battery', stored?.passwordHash ?? ''), true);
  }
});

test('set-password replaces scrypt with pbkdf2-sha256 when security.passwordHash says so, and scrypt with scrypt otherwise, with no note', async () => {
  const dir = freshPath(root, 'data');
  await setAdminPassword(dir, 'the password before', undefined, { scheme: 'scrypt', scrypt: FAST });
  assert.deepEqual(await run(['set-password'], dir, pipe('correct horse battery\n')), { code: 0, stdout: doneOutput(dir), stderr: '' });
  assert.match((await readAdminCredentials(dir))?.passwordHash ?? '', /^scrypt\$1024\$/);
  const stdout = sink();
  const code = await runAdminCommand(['set-password'], {
    dataDir: dir, passwordHash: 'pbkdf2-sha256', stdin: pipe('correct horse battery\n'), stdout: stdout.stream, stderr: sink().stream, clock: CLOCK, pbkdf2: { iterations: 1000 }, audit: recordingAuditTrail(),
  });
  assert.deepEqual({ code, stdout: stdout.text() }, {
    code: 0,
    stdout: `Admin password set at 2025-02-01T09:15:30.123Z (a pbkdf2-sha256 hash in ${path.join(path.resolve(dir), 'admin.json')}).\n` + PASSWORD_SET_NOTE,
  });
});

test('a CR LF line end, a missing line end and spaces inside are handled exactly', async () => {
  const cases: Array<[string, string]> = [
    ['crlf password 1\r\n', 'crlf password 1'],
    ['no newline at end', 'no newline at end'],
    ['  spaces kept  \n', '  spaces kept  '],
    ['\u00fcnicode p\u00e4ssword\n', '\u00fcnicode p\u00e4ssword'],
  ];
  for (const [input, password] of cases) {
    const dir = freshPath(root, 'data');
    assert.equal((await run(['set-password'], dir, pipe(input))).code, 0, input);
    const stored = await readAdminCredentials(dir);
    assert.equal(await verifyPassword(password, stored?.passwordHash ?? ''), true, input);
  }
});

test('a line split across chunks is put back together', async () => {
  const dir = freshPath(root, 'data');
  const stdin = new PassThrough();
  const done = run(['set-password'], dir, stdin);
  const bytes = Buffer.from('p\u00e4ssword in chunks\n');
  for (let i = 0; i < bytes.length; i++) stdin.write(bytes.subarray(i, i + 1));
  assert.equal((await done).code, 0);
  assert.equal(await verifyPassword('p\u00e4ssword in chunks', (await readAdminCredentials(dir))?.passwordHash ?? ''), true);
});

test('a weak, empty, over-long or non-UTF-8 piped password changes nothing', async () => {
  const dir = freshPath(root, 'data');
  assert.deepEqual(await run(['set-password'], dir, pipe('short\n')), {
    code: 1,
    stdout: '',
    stderr: 'portcullis admin set-password: The password must be at least 12 characters long; it has 5.\n',
  });
  assert.deepEqual(await run(['set-password'], dir, pipe('')), {
    code: 2,
    stdout: '',
    stderr:
      'portcullis admin set-password: no password on standard input (pipe one line in, or run at a terminal)\n' +
      'Run "portcullis admin set-password --help" for usage.\n',
  });
  assert.deepEqual(await run(['set-password'], dir, pipe('\n')), {
    code: 1,
    stdout: '',
    stderr: 'portcullis admin set-password: The password must be at least 12 characters long; it has 0.\n',
  });
  assert.deepEqual(await run(['set-password'], dir, pipe('x'.repeat(5000))), {
    code: 1,
    stdout: '',
    stderr: 'portcullis admin set-password: The password must be at most 1024 characters long.\n',
  });
  assert.deepEqual(await run(['set-password'], dir, pipe(Buffer.from([0x61, 0x62, 0x63, 0x64, 0xff, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x0a]))), {
    code: 1,
    stdout: '',
    stderr: 'portcullis admin set-password: The password on standard input is not valid UTF-8.\n',
  });
  assert.equal(existsSync(dir), false);
});

test('no data directory is exit 1', async () => {
  assert.deepEqual(await run(['set-password'], '', pipe('correct horse battery\n')), {
    code: 1,
    stdout: '',
    stderr: 'portcullis admin set-password: no data directory is configured.\n',
  });
});

test('a data directory that cannot be created is exit 1 with the error', async () => {
  const blocker = path.join(freshPath(root, 'data') + '-file');
  writeFileSync(blocker, '');
  const result = await run(['set-password'], path.join(blocker, 'data'), pipe('correct horse battery\n'));
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^portcullis admin set-password: Could not create the data directory .*data: ENOTDIR/);
});

test('at a terminal: prompts on stderr, reads twice in raw mode, writes on a match', async () => {
  const dir = freshPath(root, 'data');
  const tty = terminal(['correct horse battery\r', 'correct horse battery\r']);
  const result = await run(['set-password'], dir, tty.stdin, tty.onStderr);
  assert.deepEqual(result, { code: 0, stdout: doneOutput(dir), stderr: 'New admin password: \nRepeat the password: \n' });
  assert.deepEqual(tty.rawModes, [true, false]);
  assert.equal(await verifyPassword('correct horse battery', (await readAdminCredentials(dir))?.passwordHash ?? ''), true);
});

test('at a terminal: both lines pasted at once also work', async () => {
  const dir = freshPath(root, 'data');
  const tty = terminal(['pasted password 1\rpasted password 1\r']);
  const result = await run(['set-password'], dir, tty.stdin, tty.onStderr);
  assert.equal(result.code, 0);
  assert.deepEqual(tty.rawModes, [true, false]);
  assert.equal(await verifyPassword('pasted password 1', (await readAdminCredentials(dir))?.passwordHash ?? ''), true);
});

test('at a terminal: a mismatch, a weak first entry or Ctrl-C change nothing', async () => {
  const dir = freshPath(root, 'data');
  const mismatch = terminal(['correct horse battery\r', 'correct horse batterY\r']);
  assert.deepEqual(await run(['set-password'], dir, mismatch.stdin, mismatch.onStderr), {
    code: 1,
    stdout: '',
    stderr: 'New admin password: \nRepeat the password: \nportcullis admin set-password: The passwords do not match; nothing was changed.\n',
  });
  assert.deepEqual(mismatch.rawModes, [true, false]);
  const weak = terminal(['aaaaaaaaaaaa\r']);
  assert.deepEqual(await run(['set-password'], dir, weak.stdin, weak.onStderr), {
    code: 1,
    stdout: '',
    stderr: 'New admin password: \nportcullis admin set-password: The password must not be one character repeated.\n',
  });
  const cancelled = terminal(['correct hor\u0003']);
  assert.deepEqual(await run(['set-password'], dir, cancelled.stdin, cancelled.onStderr), {
    code: 1,
    stdout: '',
    stderr: 'New admin password: \nportcullis admin set-password: Cancelled; nothing was changed.\n',
  });
  assert.deepEqual(cancelled.rawModes, [true, false]);
  const cancelledSecond = terminal(['correct horse battery\r', '\u0004']);
  assert.equal((await run(['set-password'], dir, cancelledSecond.stdin, cancelledSecond.onStderr)).code, 1);
  assert.equal(existsSync(dir), false);
});

test('feedHiddenLine: editing keys', () => {
  assert.deepEqual(feedHiddenLine([], 'abc'), { chars: ['a', 'b', 'c'], outcome: LineOutcome.Typing, rest: '' });
  assert.deepEqual(feedHiddenLine(['a'], 'bc\r'), { chars: ['a', 'b', 'c'], outcome: LineOutcome.Entered, rest: '' });
  assert.deepEqual(feedHiddenLine([], 'ab\nxy'), { chars: ['a', 'b'], outcome: LineOutcome.Entered, rest: 'xy' });
  assert.deepEqual(feedHiddenLine([], 'ab\r\nxy\r'), { chars: ['a', 'b'], outcome: LineOutcome.Entered, rest: 'xy\r' });
  assert.deepEqual(feedHiddenLine([], 'abc\u007f\u0008d\r'), { chars: ['a', 'd'], outcome: LineOutcome.Entered, rest: '' });
  assert.deepEqual(feedHiddenLine([], '\u007f\u007fa'), { chars: ['a'], outcome: LineOutcome.Typing, rest: '' });
  assert.deepEqual(feedHiddenLine([], 'abc\u0015de'), { chars: ['d', 'e'], outcome: LineOutcome.Typing, rest: '' });
  // Backspace removes a whole code point, not half a surrogate pair.
  assert.deepEqual(feedHiddenLine([], 'a\u{1F600}\u007f'), { chars: ['a'], outcome: LineOutcome.Typing, rest: '' });
  assert.deepEqual(feedHiddenLine(['a'], '\u0003'), { chars: [], outcome: LineOutcome.Cancelled, rest: '' });
  assert.deepEqual(feedHiddenLine([], '\u0004'), { chars: [], outcome: LineOutcome.Cancelled, rest: '' });
  assert.deepEqual(feedHiddenLine(['a'], '\u0004'), { chars: ['a'], outcome: LineOutcome.Typing, rest: '' });
  // Arrow keys (CSI and SS3), a longer CSI sequence, and a lone control character are ignored.
  assert.deepEqual(feedHiddenLine([], 'a\u001b[Db\u001bOAc\u001b[1;5Cd\u0007e'), { chars: ['a', 'b', 'c', 'd', 'e'], outcome: LineOutcome.Typing, rest: '' });
});

test('feedHiddenLine keeps at most 1025 characters', () => {
  const line = feedHiddenLine([], 'x'.repeat(3000));
  assert.equal(line.chars.length, 1025);
});

test('the file written by the command is the documented format', async () => {
  const dir = freshPath(root, 'data');
  mkdirSync(dir, { recursive: true });
  await run(['set-password'], dir, pipe('correct horse battery\n'));
  const doc = JSON.parse(readFileSync(path.join(dir, 'admin.json'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(doc), ['version', 'passwordHash', 'updatedAt']);
  assert.equal(doc['version'], 1);
});

test('runCli dispatches admin with the data directory from PORTCULLIS_DATA_DIR and the injected stdin', async () => {
  const { runCli } = await import('../../src/cli/main.ts');
  const dir = freshPath(root, 'data');
  const stdout = sink();
  const stderr = sink();
  const code = await runCli(['admin', 'set-password'], {
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: { PORTCULLIS_DATA_DIR: dir },
    cwd: root,
    stdin: pipe('correct horse battery\n'),
  });
  // The one line on stderr says which data directory, and why that one.
  assert.equal(stderr.text(), `portcullis admin: data directory ${dir} (from PORTCULLIS_DATA_DIR)\n`);
  assert.equal(code, 0);
  assert.match(stdout.text(), /^Admin password set at \S+ \(a scrypt hash in .*admin\.json\)\.\n/);
  assert.equal(await verifyPassword('correct horse battery', (await readAdminCredentials(dir))?.passwordHash ?? ''), true);
  const help = sink();
  assert.equal(await runCli(['admin', '--help'], { stdout: help.stream, stderr: sink().stream, env: {}, cwd: root }), 0);
  assert.equal(help.text(), ADMIN_USAGE);
});

test('runCli with the data directory from PORTCULLIS_DATA_DIR and no config keeps a pbkdf2-sha256 admin.json pbkdf2-sha256', async () => {
  const { runCli } = await import('../../src/cli/main.ts');
  const dir = freshPath(root, 'data');
  await setAdminPassword(dir, 'the password before', undefined, { scheme: 'pbkdf2-sha256', pbkdf2: { iterations: 1000 } });
  const stdout = sink();
  const code = await runCli(['admin', 'set-password'], { stdout: stdout.stream, stderr: sink().stream, env: { PORTCULLIS_DATA_DIR: dir }, cwd: root, stdin: pipe('correct horse battery\n') });
  assert.equal(code, 0);
  assert.equal(
    stdout.text().replace(/^Admin password set at \S+ /, 'Admin password set at T '),
    `Admin password set at T (a pbkdf2-sha256 hash in ${path.join(dir, 'admin.json')}).\n` + PBKDF2_KEPT_NOTE + PASSWORD_SET_NOTE,
  );
  // The production count: the CLI's config (none) names no PBKDF2 parameters of its own.
  assert.match((await readAdminCredentials(dir))?.passwordHash ?? '', /^pbkdf2-sha256\$600000\$/);
});
