// The `portcullis` command in-process (runCli, as main.ts runs it): help,
// version, usage errors, config errors, and where the data directory comes
// from. What only the compiled bin as a process shows (its exit, a server
// that sees the CLI's keys) is in cli.system.test.ts.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { commandName } from '../../src/cli/command-name.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';
import { portcullis } from './portcullis-in-process.ts';

const tmp = tempDir('cli');
const baseEnv = { HOME: tmp };

function run(args: string[], env: Record<string, string> = {}) {
  return portcullis(args, { cwd: tmp, env: { ...baseEnv, ...env } });
}

test('help on the command and each subcommand exits 0', async () => {
  const top = await run(['--help']);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /^Usage: portcullis <command> \[options\]/);
  const serve = await run(['serve', '--help']);
  assert.equal(serve.code, 0);
  assert.match(serve.stdout, /^Usage: portcullis serve /);
  const keys = await run(['keys', '--help']);
  assert.equal(keys.code, 0);
  assert.match(keys.stdout, /^Usage: portcullis keys /);
  const create = await run(['keys', 'create', '--help']);
  assert.equal(create.code, 0);
});

test('--version, -V and version print the package version and the Node.js version', async () => {
  const { version } = JSON.parse(readFileSync(path.join(repositoryRoot(), 'package.json'), 'utf8')) as { version: string };
  assert.match(version, /^\d+\.\d+\.\d+/);
  for (const flag of ['--version', '-V', 'version']) {
    assert.deepEqual(await run([flag]), { code: 0, stdout: `portcullis ${version} (Node.js ${process.version})\n`, stderr: '' });
  }
});

test('usage errors exit 2 and say what is wrong', async () => {
  const none = await run([]);
  assert.equal(none.code, 2);
  const unknown = await run(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^portcullis: unknown command 'frobnicate'/);
  const badFlag = await run(['serve', '--bogus']);
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /^portcullis serve: unknown option '--bogus'\n\n/);
  const typo = await run(['serve', '--admin-prot', '9']);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /^portcullis serve: unknown option '--admin-prot'; did you mean '--admin-port'\?\n\n/);
  const command = await run(['chek-config']);
  assert.equal(command.code, 2);
  assert.match(command.stderr, /^portcullis: unknown command 'chek-config'; did you mean 'check-config'\?\n\n/);
  const badPort = await run(['serve', '--port', '99999']);
  assert.equal(badPort.code, 2);
  assert.match(badPort.stderr, /--port must be an integer from 0 to 65535/);
  const noValue = await run(['keys', 'list', '--config']);
  assert.equal(noValue.code, 2);
  assert.match(noValue.stderr, /--config needs a file path/);
});

test('a mistyped command is answered with the command USAGE lists that it is closest to, each of them', async () => {
  const usage = (await run(['--help'])).stdout;
  const listed = [...usage.slice(usage.indexOf('Commands:'), usage.indexOf('Options for every command:')).matchAll(/^  ([a-z-]+) /gm)].map((m) => m[1] as string);
  assert.deepEqual(listed, ['serve', 'keys', 'check-config', 'admin', 'audit', 'state']);
  for (const command of listed) {
    // The second and third letters swapped: `satte` for `state`, `kyes` for `keys`.
    const typo = command[0] + (command[2] as string) + (command[1] as string) + command.slice(3);
    const r = await run([typo]);
    assert.equal(r.code, 2, typo);
    assert.equal(r.stderr.split('\n', 1)[0], `portcullis: unknown command '${typo}'; did you mean '${command}'?`, typo);
  }
  assert.equal((await run(['sate'])).stderr.split('\n', 1)[0], 'portcullis: unknown command \'sate\'; did you mean \'state\'?');
});

test('state: a mistyped subcommand gets the suggestion, a word far from any gets none', async () => {
  assert.deepEqual(await run(['state', 'migrat']), {
    code: 2,
    stdout: '',
    stderr: 'portcullis state: unknown command \'migrat\'; did you mean \'migrate\'?\nRun "portcullis state --help" for usage.\n',
  });
  assert.deepEqual(await run(['state', 'frobnicate']), {
    code: 2,
    stdout: '',
    stderr: 'portcullis state: unknown command \'frobnicate\'\nRun "portcullis state --help" for usage.\n',
  });
});

test('config errors exit 1 and name the file and setting', async () => {
  const missing = path.join(tmp, 'nope.json');
  const r = await run(['serve', '--config', missing]);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, `portcullis serve: invalid configuration: ${missing}: file not found\n`);
  const file = path.join(tmp, 'needs-key.json');
  writeFileSync(file, JSON.stringify({ providers: { up: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'UP_KEY' } }, aliases: { a: { provider: 'up' } } }));
  const env = await run(['serve', '--config', file, '--port', '0']);
  assert.equal(env.code, 1);
  assert.equal(env.stderr, `portcullis serve: invalid configuration: ${file}: providers.up.apiKeyEnv: environment variable UP_KEY is not set or empty\n`);
  const viaEnv = await run(['keys', 'list'], { PORTCULLIS_CONFIG: missing });
  assert.equal(viaEnv.code, 1);
  assert.match(viaEnv.stderr, /nope\.json: file not found/);
});

test('serve refuses security.requireFips without a FIPS provider: exit 1, the setting and both fixes named', async () => {
  const file = path.join(tmp, 'fips.json');
  writeFileSync(file, JSON.stringify({ providers: { local: { type: 'demo' } }, aliases: { a: { provider: 'local', model: 'm' } }, security: { requireFips: true } }));
  assert.deepEqual(await run(['serve', '--config', file, '--port', '0', '--no-admin']), {
    code: 1,
    stdout: '',
    stderr:
      `portcullis serve: invalid configuration: ${file}: security.requireFips: is true, but OpenSSL runs without a FIPS provider (crypto.getFips() is 0): ` +
      'start node with --enable-fips and an OpenSSL configuration that loads a validated FIPS provider (docs/crypto.md), or set security.requireFips to false\n',
  });
});

test('the data directory: --data-dir, then PORTCULLIS_DATA_DIR, then the config, then ./data; every command says which; read-only commands never create it', async () => {
  const here = freshDir(tmp);
  const inHere = (args: string[], env: Record<string, string> = {}) => portcullis(args, { cwd: here, env: { ...baseEnv, ...env } });
  // Read-only in an empty directory: nothing is made.
  for (const sub of [['keys', 'list'], ['keys', 'usage'], ['keys', 'show', 'key_AAAAAAAAAAAAAAAA']]) {
    const r = await inHere(sub);
    assert.ok(r.stderr.startsWith(`portcullis keys: data directory ${path.join(here, 'data')} (the default: ./data in the working directory)\n`), r.stderr);
    assert.equal(existsSync(path.join(here, 'data')), false, sub.join(' '));
  }
  // The hint names the command as this process was started (as the bin, cli.system.test.ts checks it names main.js).
  assert.equal((await inHere(['keys', 'list'])).stdout, `No API keys yet. Create one with: ${commandName(process.argv[1], here)} keys create --name NAME\n`);
  const config = path.join(here, 'gw.json');
  writeFileSync(config, JSON.stringify({ dataDir: 'from-config', providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo' } } }));
  const cases: Array<[string[], Record<string, string>, string, string]> = [
    [['--config', config, 'keys', 'create', '--name', 'a'], {}, path.join(here, 'from-config'), `from ${config}`],
    [['--config', config, 'keys', 'create', '--name', 'b'], { PORTCULLIS_DATA_DIR: 'from-env' }, path.join(here, 'from-env'), 'from PORTCULLIS_DATA_DIR'],
    [['--config', config, '--data-dir', 'from-flag', 'keys', 'create', '--name', 'c'], { PORTCULLIS_DATA_DIR: 'from-env' }, path.join(here, 'from-flag'), 'from --data-dir'],
  ];
  for (const [args, env, dir, origin] of cases) {
    const r = await inHere(args, env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, `portcullis keys: data directory ${dir} (${origin})\n`);
    assert.ok(existsSync(path.join(dir, 'keys.json')), dir);
  }
  assert.deepEqual(await inHere(['keys', 'list', '--data-dir']), {
    code: 2,
    stdout: '',
    stderr: (await inHere(['--data-dir'])).stderr,
  });
  assert.match((await inHere(['--data-dir'])).stderr, /^portcullis: --data-dir needs a directory\n/);
});
