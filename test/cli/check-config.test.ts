// `portcullis check-config`, called in-process with captured output; the
// TLS files it checks come from the in-process test PKI.
import assert from 'node:assert/strict';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { CHECK_CONFIG_USAGE, checkConfigFile, runCheckConfigCommand } from '../../src/cli/check-config-command.ts';
import { runCli } from '../../src/cli/main.ts';
import { createInProcessPki } from '../tls/in-process-pki.ts';
import { sink } from '../support/collect.ts';
import { freshDir, tempDir } from '../support/temp-dir.ts';

const tmp = tempDir('check-config');

const SECRET = 'sk-test-0123456789abcdef';
const credentialsDir = path.join(tmp, 'credentials');
mkdirSync(credentialsDir);
writeFileSync(path.join(credentialsDir, 'openai-api-key'), `${SECRET}\n`);


function run(args: string[], options: { env?: NodeJS.ProcessEnv; configPath?: string } = {}) {
  const stdout = sink();
  const stderr = sink();
  const code = runCheckConfigCommand(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: options.env ?? {},
    cwd: tmp,
    configPath: options.configPath,
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

function writeConfig(name: string, value: unknown): string {
  writeFileSync(path.join(tmp, name), typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return name;
}

const GOOD = {
  listen: { host: '127.0.0.1', port: 8080 },
  dataDir: '/var/lib/portcullis',
  providers: {
    openai: { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKeyFile: '${CREDENTIALS_DIRECTORY}/openai-api-key' },
    local: { type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', apiKeyEnv: 'LOCAL_KEY' },
    demo: { type: 'demo' },
  },
  aliases: {
    'service-chat': { targets: [{ provider: 'local', model: 'llama' }, { provider: 'openai', model: 'gpt-4o-mini', priority: 1 }] },
    'service-demo': { provider: 'demo' },
  },
  auto: { default: 'service-chat' },
};
const GOOD_SUMMARY =
  '  3 providers: openai (openai), local (openai), demo (demo); 2 aliases: service-chat, service-demo; ' +
  'service-auto defaults to service-chat; listen 127.0.0.1:8080; data /var/lib/portcullis\n';
const goodEnv = { CREDENTIALS_DIRECTORY: credentialsDir, LOCAL_KEY: 'local-secret' };

describe('check-config on a good file', () => {
  const file = writeConfig('good.json', GOOD);

  test('prints FILE: ok and a one-line summary, exit 0, and never a key', () => {
    const r = run([file], { env: goodEnv });
    assert.deepEqual(r, { code: 0, stdout: `good.json: ok\n${GOOD_SUMMARY}`, stderr: '' });
    assert.ok(!r.stdout.includes(SECRET) && !r.stdout.includes('local-secret'));
  });

  test('--credentials-dir stands in for $CREDENTIALS_DIRECTORY outside the service', () => {
    const r = run(['--credentials-dir', credentialsDir, file], { env: { LOCAL_KEY: 'x' } });
    assert.deepEqual(r, { code: 0, stdout: `good.json: ok\n${GOOD_SUMMARY}`, stderr: '' });
  });

  test('--skip-credentials checks the file alone', () => {
    const r = run(['--skip-credentials', file]);
    assert.deepEqual(r, { code: 0, stdout: `good.json: ok\n${GOOD_SUMMARY}`, stderr: '' });
  });

  test('without FILE it checks --config, then $PORTCULLIS_CONFIG', () => {
    assert.equal(run([], { env: goodEnv, configPath: file }).stdout, `good.json: ok\n${GOOD_SUMMARY}`);
    assert.equal(run([], { env: { ...goodEnv, PORTCULLIS_CONFIG: file } }).stdout, `good.json: ok\n${GOOD_SUMMARY}`);
  });
});

describe('check-config on files with problems', () => {
  test('a missing file', () => {
    assert.deepEqual(run(['nope.json']), { code: 1, stdout: '', stderr: 'nope.json: file not found\n' });
  });

  test('a file that is not JSON names the place', () => {
    const file = writeConfig('broken.json', '{"listen": {"port": 80,}}');
    const r = run([file]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      "broken.json: is not valid JSON at line 1, column 24: Unexpected byte '}' (0x7d), expected a key, at byte offset 23 (parser state Key)\n",
    );
  });

  test('a JSON mistake further down: its line and column, counted in characters', () => {
    const file = writeConfig('broken-lines.json', '{\n  "listen": { "host": "h\u00e9te" "port": 80 }\n}\n');
    const r = run([file]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      "broken-lines.json: is not valid JSON at line 2, column 30: Unexpected byte '\"' (0x22), expected ',' or '}', at byte offset 32 (parser state CommaOrObjectEnd)\n",
    );
  });

  test('a wrong setting is named by its path', () => {
    const file = writeConfig('typo.json', { ...GOOD, aliases: { 'service-chat': { provider: 'locl' } } });
    assert.deepEqual(run([file], { env: goodEnv }), {
      code: 1,
      stdout: '',
      stderr: `typo.json: aliases.service-chat.provider: names provider 'locl', which is not defined under "providers"\n`,
    });
  });

  test('an unknown setting is named by its path, with the setting it was probably meant to be', () => {
    const file = writeConfig('unknown.json', { ...GOOD, listen: { host: '127.0.0.1', prot: 8080 } });
    assert.deepEqual(run([file], { env: goodEnv }), {
      code: 1,
      stdout: '',
      stderr: "unknown.json: listen.prot: unknown setting; did you mean 'port'?\n",
    });
  });

  test('every problem in the file is listed at once, one per line, path first', () => {
    const file = writeConfig('many.json', {
      listen: { prot: 9000 },
      providers: { up: { type: 'openai', baseURL: 'http://h/v1', timeoutMs: 5 } },
      aliases: { x: { targets: [{ provider: 'up' }, { provider: 'nope' }] } },
    });
    assert.deepEqual(run([file], { env: goodEnv }), {
      code: 1,
      stdout: '',
      stderr:
        "many.json: listen.prot: unknown setting; did you mean 'port'?\n" +
        "many.json: providers.up.baseURL: unknown setting; did you mean 'baseUrl'?\n" +
        'many.json: providers.up.baseUrl: must be a non-empty string\n' +
        'many.json: providers.up.timeoutMs: must be an integer from 100 to 3600000\n' +
        `many.json: aliases.x.targets[1].provider: names provider 'nope', which is not defined under "providers"\n`,
    });
  });

  test('embeddings aliases: each problem of kind named by its path, with what to write instead', () => {
    const file = writeConfig('embeddings.json', {
      ...GOOD,
      providers: { ...GOOD.providers, claude: { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' } },
      aliases: {
        ...GOOD.aliases,
        'text-embed': { kind: 'embeddings', provider: 'claude', contextWindow: 8192, price: { output: 1 } },
      },
      auto: { default: 'text-embed' },
      embeddings: { maxInputs: 20_000 },
    });
    assert.deepEqual(run(['--skip-credentials', file]), {
      code: 1,
      stdout: '',
      stderr:
        'embeddings.json: aliases.text-embed.contextWindow: is a chat setting; an alias with "kind": "embeddings" does not take it: remove it, or give the chat model an alias of its own\n' +
        'embeddings.json: aliases.text-embed.price.input: is required\n' +
        `embeddings.json: aliases.text-embed.provider: names provider 'claude' of type "anthropic": Anthropic has no embeddings API; use an openai or demo provider\n` +
        "embeddings.json: auto.default: names 'text-embed', an embeddings alias; service-auto routes chat requests: name a chat alias (service-chat, service-demo)\n" +
        'embeddings.json: embeddings.maxInputs: must not exceed limits.maxMembers (10000): the JSON parser refuses a longer input array first; lower it, or raise limits.maxMembers\n',
    });
  });

  test('the summary marks embeddings aliases', () => {
    const file = writeConfig('with-embed.json', { ...GOOD, aliases: { ...GOOD.aliases, 'text-embed': { kind: 'embeddings', provider: 'local', model: 'bge-m3' } } });
    assert.deepEqual(run(['--skip-credentials', file]), {
      code: 0,
      stdout: `with-embed.json: ok\n${GOOD_SUMMARY.replace('2 aliases: service-chat, service-demo;', '3 aliases: service-chat, service-demo, text-embed (embeddings);')}`,
      stderr: '',
    });
  });

  test('every missing upstream key is named, each by its provider', () => {
    const emptyDir = path.join(tmp, 'no-credentials');
    mkdirSync(emptyDir, { recursive: true });
    const r = run([writeConfig('good-again.json', GOOD)], { env: { CREDENTIALS_DIRECTORY: emptyDir } });
    assert.deepEqual(r, {
      code: 1,
      stdout: '',
      stderr:
        `good-again.json: providers.openai.apiKeyFile: ${path.join(emptyDir, 'openai-api-key')} does not exist\n` +
        'good-again.json: providers.local.apiKeyEnv: environment variable LOCAL_KEY is not set or empty\n',
    });
  });

  test('an empty credential file is named', () => {
    const dir = path.join(tmp, 'empty-credential');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'openai-api-key'), '\n');
    const r = run(['--credentials-dir', dir, writeConfig('good-3.json', GOOD)], { env: { LOCAL_KEY: 'x' } });
    assert.deepEqual(r, { code: 1, stdout: '', stderr: `good-3.json: providers.openai.apiKeyFile: ${path.join(dir, 'openai-api-key')} is empty\n` });
  });

  test('$CREDENTIALS_DIRECTORY unset outside the service: the problem says what to pass', () => {
    const r = run([writeConfig('good-4.json', GOOD)], { env: { LOCAL_KEY: 'x' } });
    assert.deepEqual(r, {
      code: 1,
      stdout: '',
      stderr:
        'good-4.json: providers.openai.apiKeyFile: environment variable CREDENTIALS_DIRECTORY (used in the path) is not set' +
        ' (systemd sets it for the service; to check outside it, pass --credentials-dir DIR or --skip-credentials)\n',
    });
  });

  test('admin.oidc\'s client secret is read as a login reads it: a missing file or variable, an empty file; never its value', () => {
    const oidc = { issuer: 'https://login.example.com', clientId: 'portcullis', redirectUrl: 'http://127.0.0.1:8081/sso/callback', allowedUsers: ['a@example.com'] };
    const withSecret = (name: string, secret: Record<string, string>) => writeConfig(name, { ...GOOD, admin: { oidc: { ...oidc, ...secret } } });
    const env = { ...goodEnv, OIDC_SECRET: 'oidc-secret-value' };
    const missingFile = run([withSecret('oidc-1.json', { clientSecretFile: '${CREDENTIALS_DIRECTORY}/oidc-secret' })], { env });
    assert.deepEqual(missingFile, { code: 1, stdout: '', stderr: `oidc-1.json: admin.oidc.clientSecretFile: ${path.join(credentialsDir, 'oidc-secret')} does not exist\n` });
    const unset = run([withSecret('oidc-2.json', { clientSecretEnv: 'OIDC_SECRET_UNSET' })], { env });
    assert.deepEqual(unset, { code: 1, stdout: '', stderr: 'oidc-2.json: admin.oidc.clientSecretEnv: environment variable OIDC_SECRET_UNSET is not set or empty\n' });
    writeFileSync(path.join(credentialsDir, 'oidc-empty'), '\n');
    const empty = run([withSecret('oidc-3.json', { clientSecretFile: '${CREDENTIALS_DIRECTORY}/oidc-empty' })], { env });
    assert.deepEqual(empty, { code: 1, stdout: '', stderr: 'oidc-3.json: admin.oidc.clientSecretFile: the file is empty\n' });
    writeFileSync(path.join(credentialsDir, 'oidc-secret'), 'oidc-secret-value\n');
    for (const [name, secret] of [['oidc-4.json', { clientSecretFile: '${CREDENTIALS_DIRECTORY}/oidc-secret' }], ['oidc-5.json', { clientSecretEnv: 'OIDC_SECRET' }]] as const) {
      const ok = run([withSecret(name, secret)], { env });
      assert.equal(ok.code, 0, ok.stderr);
      assert.ok(!ok.stdout.includes('oidc-secret-value'));
    }
    assert.equal(run(['--skip-credentials', withSecret('oidc-6.json', { clientSecretEnv: 'OIDC_SECRET_UNSET' })]).code, 0, '--skip-credentials skips it too');
  });

  test('several files: each is reported, and one bad file makes the exit 1', () => {
    const good = writeConfig('good-5.json', GOOD);
    const r = run([good, 'missing.json'], { env: goodEnv });
    assert.deepEqual(r, { code: 1, stdout: `good-5.json: ok\n${GOOD_SUMMARY}`, stderr: 'missing.json: file not found\n' });
  });
});

describe('check-config usage', () => {
  test('--help prints the usage on stdout, exit 0', () => {
    assert.deepEqual(run(['--help']), { code: 0, stdout: CHECK_CONFIG_USAGE, stderr: '' });
    assert.match(CHECK_CONFIG_USAGE, /^Usage: portcullis check-config \[options\] FILE\.\.\.\n/);
  });

  const usageCases: Array<[string, string[], string]> = [
    ['no file at all', [], 'name a config file to check'],
    ['an empty --credentials-dir', ['--credentials-dir=', 'a.json'], '--credentials-dir needs a folder'],
    ['both credential options', ['--credentials-dir', '/x', '--skip-credentials', 'a.json'], '--credentials-dir and --skip-credentials exclude each other'],
    ['an empty file name', [''], 'a file name is empty'],
    ['too many files', Array.from({ length: 65 }, (_, i) => `f${i}.json`), 'at most 64 files at once'],
    ['an unknown option', ['--bogus', 'a.json'], "unknown option '--bogus'"],
    ['a mistyped option', ['--skip-credential', 'a.json'], "unknown option '--skip-credential'; did you mean '--skip-credentials'?"],
    ['--credentials-dir without a value', ['a.json', '--credentials-dir'], "option '--credentials-dir' needs a value (write --credentials-dir=VALUE for a value starting with '-')"],
  ];
  for (const [name, args, message] of usageCases) {
    test(`usage error: ${name} exits 2 with the usage`, () => {
      assert.deepEqual(run(args), { code: 2, stdout: '', stderr: `portcullis check-config: ${message}\n\n${CHECK_CONFIG_USAGE}` });
    });
  }
});

describe('checkConfigFile', () => {
  test('returns the problems as data with their paths', () => {
    assert.deepEqual(checkConfigFile('nope.json', { env: {}, cwd: tmp, credentials: true }), {
      kind: 'problems',
      problems: [{ code: 'unreadable', path: '', problem: 'file not found' }],
      warnings: [],
    });
  });
});

describe('portcullis check-config through the command dispatcher', () => {
  test('runCli dispatches check-config, passing --config through', async () => {
    const file = writeConfig('good-6.json', GOOD);
    const stdout = sink();
    const stderr = sink();
    const code = await runCli(['--config', file, 'check-config', '--skip-credentials'], { stdout: stdout.stream, stderr: stderr.stream, env: {}, cwd: tmp });
    assert.equal(code, 0);
    assert.equal(stdout.text(), `good-6.json: ok\n${GOOD_SUMMARY}`);
    assert.equal(stderr.text(), '');
  });

  test('the top-level usage lists check-config', async () => {
    const stdout = sink();
    await runCli(['--help'], { stdout: stdout.stream, stderr: sink().stream, env: {}, cwd: tmp });
    assert.match(stdout.text(), /\n {2}check-config Check config files without starting/);
  });
});

test('check-config: the Redis password source is checked like the upstream keys', () => {
  const dir = freshDir(tmp);
  const file = path.join(dir, 'redis.json');
  writeFileSync(file, JSON.stringify({
    providers: { demo: { type: 'demo' } },
    aliases: { 'service-chat': { provider: 'demo' } },
    state: { backend: 'redis', redis: { url: 'redis://gw@127.0.0.1:6379/0', passwordFile: '${CREDENTIALS_DIRECTORY}/redis-password' } },
  }));
  assert.deepEqual(checkConfigFile(file, { env: { CREDENTIALS_DIRECTORY: dir }, cwd: dir, credentials: true }), {
    kind: 'problems',
    problems: [{ code: 'missing_credential', path: 'state.redis.passwordFile', problem: `${path.join(dir, 'redis-password')} does not exist` }],
    warnings: [],
  });
  assert.deepEqual(checkConfigFile(file, { env: {}, cwd: dir, credentials: true }), {
    kind: 'problems',
    problems: [{
      code: 'missing_credential',
      path: 'state.redis.passwordFile',
      problem: 'environment variable CREDENTIALS_DIRECTORY (used in the path) is not set (systemd sets it for the service; to check outside it, pass --credentials-dir DIR or --skip-credentials)',
    }],
    warnings: [],
  });
  writeFileSync(path.join(dir, 'redis-password'), 'secret\n');
  assert.equal(checkConfigFile(file, { env: { CREDENTIALS_DIRECTORY: dir }, cwd: dir, credentials: true }).kind, 'ok');
  assert.equal(checkConfigFile(file, { env: {}, cwd: dir, credentials: false }).kind, 'ok');
});

describe('check-config checks every TLS file', () => {
  const pki = createInProcessPki();
  after(() => pki.cleanup());
  const server = pki.server('server');
  const client = pki.client('client', 'gateway-1');
  const expired = pki.server('expired', ['expired.internal'], { days: -1 });
  const soon = pki.server('soon', ['soon.internal'], { days: 10 });
  const encrypted = path.join(pki.dir, 'encrypted.key');
  // As `openssl genpkey -algorithm EC -aes256` writes it: encrypted PKCS#8.
  writeFileSync(encrypted, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' }));
  const garbage = path.join(pki.dir, 'garbage.pem');
  writeFileSync(garbage, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
  const validTo = (pem: Buffer): string => new Date(new X509Certificate(pem).validTo).toISOString();

  /** A config whose every file is good: the API and admin listeners over TLS, an upstream with mutual TLS. */
  function tlsConfig(over: { listen?: object; admin?: object; up?: object; soon?: object } = {}) {
    return {
      listen: { host: '127.0.0.1', port: 8443, tls: { certFile: server.certFile, keyFile: server.keyFile, ...over.listen } },
      admin: { tls: { certFile: server.certFile, keyFile: server.keyFile, clientCaFile: pki.caFile, ...over.admin } },
      dataDir: '/var/lib/portcullis',
      providers: {
        up: { type: 'openai', baseUrl: 'https://llm.internal/v1', apiKeyEnv: 'UP_KEY', transport: 'node', tls: { caFile: pki.caFile, certFile: client.certFile, keyFile: client.keyFile, ...over.up } },
        ...(over.soon === undefined ? {} : { soon: { type: 'anthropic', baseUrl: 'https://claude.internal', transport: 'node', tls: over.soon } }),
      },
      aliases: { 'service-chat': { provider: 'up' } },
    };
  }
  const env = { UP_KEY: 'up-secret' };
  const SUMMARY = '  1 provider: up (openai); 1 alias: service-chat; service-auto defaults to service-chat; listen 127.0.0.1:8443; data /var/lib/portcullis\n';

  test('all files good: ok, nothing on stderr', () => {
    assert.deepEqual(run([writeConfig('tls-good.json', tlsConfig())], { env }), { code: 0, stdout: `tls-good.json: ok\n${SUMMARY}`, stderr: '' });
  });

  test('a config with several bad files: every problem with its setting, in one pass, exit 1', () => {
    const file = writeConfig('tls-bad.json', tlsConfig({
      listen: { certFile: path.join(pki.dir, 'missing.pem'), keyFile: server.certFile, clientCaFile: pki.dir },
      admin: { certFile: expired.certFile, keyFile: expired.keyFile, clientCaFile: pki.caFile },
      up: { caFile: garbage, keyFile: encrypted },
      soon: { caFile: soon.certFile },
    }));
    const r = run([file], { env: {} });
    assert.deepEqual(r, {
      code: 1,
      stdout: '',
      stderr:
        `tls-bad.json: listen.tls.certFile: ${path.join(pki.dir, 'missing.pem')} does not exist\n` +
        'tls-bad.json: listen.tls.keyFile: holds no PEM private key ("-----BEGIN PRIVATE KEY-----") (it holds a certificate: is it the certificate file?)\n' +
        `tls-bad.json: listen.tls.clientCaFile: ${pki.dir} is a directory\n` +
        `tls-bad.json: admin.tls.certFile: certificate 1 of 1 (CN=expired.internal) expired on ${validTo(expired.cert)}; renew it\n` +
        'tls-bad.json: providers.up.apiKeyEnv: environment variable UP_KEY is not set or empty\n' +
        'tls-bad.json: providers.up.tls.caFile: certificate 1 of 1 is not a valid X.509 certificate\n' +
        'tls-bad.json: providers.up.tls.keyFile: holds an encrypted private key; give it unencrypted (protect the file by its permissions or a systemd credential)\n' +
        `tls-bad.json: providers.soon.tls.caFile: warning: every CA certificate in it expires by ${validTo(soon.cert)}, within 30 days; add the CA's next certificate before then\n`,
    });
    // As data: each TLS problem with its code.
    const check = checkConfigFile(file, { env: {}, cwd: tmp, credentials: true });
    assert.ok(check.kind === 'problems');
    assert.deepEqual(check.problems.map((p) => `${p.code} ${p.path}`), [
      'invalid_tls_file listen.tls.certFile',
      'invalid_tls_file listen.tls.keyFile',
      'invalid_tls_file listen.tls.clientCaFile',
      'invalid_tls_file admin.tls.certFile',
      'missing_credential providers.up.apiKeyEnv',
      'invalid_tls_file providers.up.tls.caFile',
      'invalid_tls_file providers.up.tls.keyFile',
    ]);
    assert.deepEqual(check.warnings.map((w) => `${w.code} ${w.path}`), ['certificate_expires_soon providers.soon.tls.caFile']);
    // --skip-credentials checks the config file alone.
    assert.equal(run(['--skip-credentials', file]).code, 0);
  });

  test('a certificate that expires within 30 days: a warning naming the date, exit 0', () => {
    const r = run([writeConfig('tls-soon.json', tlsConfig({ listen: { certFile: soon.certFile, keyFile: soon.keyFile } }))], { env });
    assert.deepEqual(r, {
      code: 0,
      stdout: `tls-soon.json: ok, with 1 warning\n${SUMMARY}`,
      stderr: `tls-soon.json: listen.tls.certFile: warning: certificate 1 of 1 (CN=soon.internal) expires on ${validTo(soon.cert)}, within 30 days; renew it before then\n`,
    });
  });

  test('${CREDENTIALS_DIRECTORY} in TLS paths: named with the options when unset; --credentials-dir stands in for it', () => {
    const file = writeConfig('tls-credentials.json', tlsConfig({ listen: { keyFile: '${CREDENTIALS_DIRECTORY}/server.key' }, up: { keyFile: '${CREDENTIALS_DIRECTORY}/client.key' } }));
    const unset = 'environment variable CREDENTIALS_DIRECTORY (used in the path) is not set' +
      ' (systemd sets it for the service; to check outside it, pass --credentials-dir DIR or --skip-credentials)';
    assert.deepEqual(run([file], { env }), {
      code: 1,
      stdout: '',
      stderr: `tls-credentials.json: listen.tls.keyFile: ${unset}\ntls-credentials.json: providers.up.tls.keyFile: ${unset}\n`,
    });
    assert.deepEqual(run(['--credentials-dir', pki.dir, file], { env }), { code: 0, stdout: `tls-credentials.json: ok\n${SUMMARY}`, stderr: '' });
  });

  test('relative paths are relative to the config file, not the working directory', () => {
    const sub = path.join(tmp, 'etc-portcullis');
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, 'gw.pem'), server.cert);
    writeFileSync(path.join(sub, 'gw.key'), server.key);
    writeConfig('etc-portcullis/relative.json', { ...tlsConfig(), listen: { host: '127.0.0.1', port: 8443, tls: { certFile: 'gw.pem', keyFile: './gw.key' } } });
    assert.equal(run(['etc-portcullis/relative.json'], { env }).stderr, '');
  });

  test('admin.tls is not read when the admin listener is off (serve would not read it)', () => {
    const value = tlsConfig({ admin: { certFile: 'nope.pem' } });
    const r = run([writeConfig('tls-admin-off.json', { ...value, admin: { ...value.admin, enabled: false } })], { env });
    assert.deepEqual(r, { code: 0, stdout: `tls-admin-off.json: ok\n${SUMMARY}`, stderr: '' });
  });

  test('state.redis.tls files are checked too', () => {
    const file = writeConfig('tls-redis.json', { ...tlsConfig(), state: { backend: 'redis', redis: { url: 'rediss://redis.internal:6380', tls: { caFile: 'redis-ca.pem', certFile: client.certFile, keyFile: server.keyFile } } } });
    const check = checkConfigFile(file, { env, cwd: tmp, credentials: true });
    assert.ok(check.kind === 'problems');
    assert.deepEqual(check.problems.filter((p) => p.path.startsWith('state.redis.tls')), [
      { code: 'invalid_tls_file', path: 'state.redis.tls.caFile', problem: `${path.join(tmp, 'redis-ca.pem')} does not exist` },
      { code: 'invalid_tls_file', path: 'state.redis.tls.keyFile', problem: 'does not match the certificate in certFile (CN=gateway-1): give the key that certificate was issued for' },
    ]);
  });
});

test('check-config: the environment\'s proxy variables are judged as serve would apply them', () => {
  const file = writeConfig('proxy.json', {
    providers: {
      pinned: { type: 'openai', baseUrl: 'https://llm.example.com/v1', transport: 'fetch' },
      loose: { type: 'openai', baseUrl: 'https://other.example.com/v1' },
    },
    aliases: { 'service-chat': { targets: [{ provider: 'pinned', model: 'm' }, { provider: 'loose', model: 'm', priority: 1 }] } },
  });
  const out = run([file], { env: { HTTPS_PROXY: 'http://proxy.internal:3128' } });
  assert.equal(out.code, 1);
  assert.equal(
    out.stderr,
    `${file}: providers.pinned.transport: is "fetch", but an egress proxy applies to this upstream (proxy http://proxy.internal:3128 (HTTPS_PROXY)) and the built-in fetch cannot use one: set "proxy": "none" to connect directly, or "transport": "node" to go through the proxy\n`,
  );
  const socks = run([file], { env: { https_proxy: 'socks5://u:p@proxy.internal:1080' } });
  assert.equal(socks.code, 1);
  assert.match(socks.stderr, /: https_proxy \(environment variable\): is a socks5:\/\/ proxy; Portcullis supports http:\/\/ proxies only \(HTTP CONNECT\)\n$/);
  assert.equal(run([file], { env: { HTTPS_PROXY: 'http://proxy.internal:3128', NO_PROXY: 'example.com' } }).code, 0);
});

describe('check-config on an alias that mixes provider types', () => {
  const MIXED = {
    ...GOOD,
    providers: { ...GOOD.providers, claude: { type: 'anthropic', apiKeyEnv: 'CLAUDE_KEY' } },
    aliases: {
      ...GOOD.aliases,
      'service-mixed': { targets: [{ provider: 'local', model: 'llama' }, { provider: 'claude', model: 'claude-x', priority: 1 }] },
      'service-claudes': { targets: [{ provider: 'claude', model: 'claude-x' }, { provider: 'claude', model: 'claude-y', priority: 1 }] },
    },
  };
  const file = writeConfig('mixed.json', MIXED);
  const WARNING =
    'mixed.json: aliases.service-mixed.targets: warning: the targets take different requests: claude/claude-x (anthropic) refuses ' +
    'response_format {"type": "json_object"}; a blank stop entry such as "\\n"; temperature above 1; temperature and top_p together; ' +
    'a tool whose parameters have a type other than "object"; messages that end with the assistant\'s, or hold no user message or a blank one; ' +
    'which local/llama (openai) takes. Such a request is never sent to a target that refuses it, so it fails when the targets that take it fail; ' +
    'give those requests an alias of their own, or mix only targets of one provider type\n';

  test('on an alias that accepts request fields, what the Anthropic target refuses of those fields too', () => {
    const fielded = writeConfig('mixed-fields.json', { ...MIXED, requestFields: ['seed', 'json_schema'], aliases: { ...MIXED.aliases, 'service-claudes': { provider: 'claude', model: 'claude-x' } } });
    const check = checkConfigFile(path.join(tmp, fielded), { env: {}, cwd: tmp, credentials: false });
    assert.equal(check.warnings.length, 1);
    assert.match(
      check.warnings[0]?.message ?? '',
      /a blank one; response_format json_schema with a recursive schema, or without "strict": true one with bounds Anthropic does not take \(minimum, maxItems, pattern, \.\.\.\); seed; which local\/llama/,
    );
  });

  test('a warning naming the alias, what the Anthropic target refuses and which target takes it; exit 0', () => {
    assert.deepEqual(run([file], { env: { ...goodEnv, CLAUDE_KEY: 'k' } }), {
      code: 0,
      stdout:
        'mixed.json: ok, with 1 warning\n' +
        '  4 providers: openai (openai), local (openai), demo (demo), claude (anthropic); 4 aliases: service-chat, service-demo, service-mixed, service-claudes; ' +
        'service-auto defaults to service-chat; listen 127.0.0.1:8080; data /var/lib/portcullis\n',
      stderr: WARNING,
    });
  });

  test('--skip-credentials still warns: the warning is about the config, not the files it names', () => {
    const result = run(['--skip-credentials', file]);
    assert.equal(result.code, 0);
    assert.equal(result.stderr, WARNING);
  });

  test('as data: the code and the path; an alias of one provider type has none', () => {
    const check = checkConfigFile(path.join(tmp, file), { env: {}, cwd: tmp, credentials: false });
    assert.deepEqual(check.warnings.map((w) => `${w.code} ${w.path}`), ['alias_targets_differ aliases.service-mixed.targets']);
  });
});
