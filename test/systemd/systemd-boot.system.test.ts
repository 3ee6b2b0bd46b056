// The release tarball under a real systemd: a Debian 12 root (debootstrap,
// cached outside the clone: ./debian-root.ts) booted with
// `systemd-nspawn -b --register=no --keep-unit --private-network`
// (./nspawn-container.ts), the release's signature and checksums verified and
// the package installed into it the way docs/deploy.md says, and then, in order: socket activation, readiness,
// credentials, key creation as the service user, a chat request, reload of a
// good and of a bad config, the journal, the hardening score, and a stop with
// a stream draining.
//
// Needs root, systemd-nspawn, and for the first run debootstrap and Debian's
// mirror; skipped with the reason printed where any is missing or where
// nspawn cannot boot a container on this machine. Every step has its own
// bounded wait, and a failing step's message carries the unit's journal.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { eventually } from '../support/eventually.ts';
import { repositoryRoot } from '../support/repository-root.ts';
import { cacheDirectory, cachedRoot, findDebootstrap, mirrorProblem, systemdTestUnsupported } from './debian-root.ts';
import { NetworkAgent } from './network-agent.ts';
import { BootFailure, Container, type RunResult } from './nspawn-container.ts';
import { packCheckout } from '../../scripts/release/package.ts';
import { signRelease } from '../../scripts/release/release.ts';
import { signingKey } from '../../scripts/release/sign.ts';

const execFileAsync = promisify(execFile);
const root = repositoryRoot();
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
const docs = readFileSync(path.join(root, 'docs', 'deploy.md'), 'utf8');

const BOOT_MS = 60_000;
const STEP_MS = 30_000;
/** How often a step looks again for what it waits on; each look is a process in the container. */
const POLL_MS = 50;
/** The upstream key: it must reach the fake upstream and appear nowhere else. */
const UPSTREAM_SECRET = `sk-systemd-test-${process.pid}-secret`;
/** A prompt that must never be logged. */
const PROMPT = 'Please repeat the words purple giraffe ledger';

const log = (line: string): void => console.log(`# systemd-boot: ${line}`);

// The config the service runs: the demo provider, and an OpenAI-compatible
// upstream whose key is the systemd credential; the upstream is a fake on the
// container's loopback (./network-agent.ts) that reports the Authorization
// header it got, and holds a streamed answer open until the test lets it go.
const config = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify(
    {
      providers: {
        demo: { type: 'demo' },
        upstream: { type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', apiKeyFile: '${CREDENTIALS_DIRECTORY}/openai-api-key' },
      },
      aliases: { 'service-chat': { provider: 'demo' }, 'service-upstream': { provider: 'upstream', model: 'fake-model' }, ...extra },
    },
    null,
    2,
  ) + '\n';

/**
 * A signed release-shaped set of files, into `dir`: the packer's code for a
 * checkout as it is (packCheckout) and the signer of `npm run release`, on the
 * work tree's own build this test run made (not a release of a commit: no
 * clone and rebuild, which test/release covers), signed with a throwaway key
 * whose allowed_signers line is written beside it.
 */
async function releaseInto(dir: string): Promise<string> {
  const key = path.join(dir, 'release-key');
  await execFileAsync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', key], { timeout: STEP_MS });
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.toLowerCase().startsWith('npm_') && name !== 'SOURCE_DATE_EPOCH') env[name] = value;
  env['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`;
  const released = await signRelease(await packCheckout({ root, out: dir, env }), await signingKey(key, env), env);
  writeFileSync(path.join(dir, 'allowed_signers'), `${released.allowedSigners}\n`);
  const tarball = path.basename(released.packed.tarball);
  assert.equal(tarball, `portcullis-${version}.tgz`);
  return tarball;
}

let container: Container | undefined;
after(async () => {
  if (container === undefined) return;
  const report = await container.destroy();
  assert.deepEqual(report.problems, [], 'the container left something behind');
  assert.ok(!existsSync(container.tmp), `${container.tmp} is still there`);
});

test('the packed tarball under a real systemd: socket activation, readiness, credentials, keys, chat, reload, journal, stop', { timeout: 100_000 }, async (t) => {
  const started = Date.now();
  const elapsed = (): string => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const skip = (reason: string): void => {
    log(`skipped, ${reason}`);
    t.skip(reason);
  };

  const cannot = await systemdTestUnsupported();
  if (cannot !== undefined) return skip(cannot);

  // The Debian root is made by the suite's setup step (run-suite.ts), with its own bound, never inside this test's.
  const lower = cachedRoot();
  if (lower === undefined) {
    const debootstrap = await findDebootstrap();
    if (debootstrap === undefined) return skip('no cached Debian root and debootstrap is not installed (.ci/install-system-packages installs it)');
    const problem = await mirrorProblem();
    if (problem !== undefined) return skip(`no cached Debian root, and debootstrap cannot fetch one: ${problem}`);
    assert.fail(`no cached Debian root in ${cacheDirectory()}: the suite's setup step makes it (npm test, or node dist/test/support/suite/run-suite.js ${path.relative(root, process.argv[1] ?? '')}); its output says why it did not`);
  }

  // A fresh overlay of the cached root; the release is made while it boots, then verified and copied in as an operator would.
  const made = Container.create({ lower, log });
  container = made;
  const packing = releaseInto(made.scratch).then((name) => (log(`released after ${elapsed()}`), name));
  try {
    await made.boot(BOOT_MS);
    log(`booted after ${elapsed()}`);
  } catch (err) {
    await packing.catch(() => undefined);
    if (err instanceof BootFailure) return skip(`systemd-nspawn cannot boot a container here: ${err.message}`);
    throw err;
  }
  // Started while the release is made: a Node process start is seconds on a loaded machine.
  const agent = new NetworkAgent((script) => made.spawnInNetwork(script, []));
  t.after(() => agent.stop());
  const nodeInside = await made.run('node --version');
  if (nodeInside.stdout.trim() !== process.version) {
    return skip(`the host's Node.js (${process.execPath}) does not run inside Debian 12: ${nodeInside.stdout}${nodeInside.stderr}`);
  }
  const tarball = await packing;
  writeFileSync(path.join(made.root, 'root', 'config.json'), config());

  const journal = async (): Promise<string> => {
    const shown = await made.run('journalctl --no-pager -o short-monotonic -u portcullis.service -u portcullis.socket -u portcullis-admin.socket -n 150', { timeoutMs: 15_000 });
    return `${shown.stdout}${shown.stderr}`;
  };
  /** Runs a shell command inside; a non-zero exit fails with its output. */
  const inside = async (script: string, options: { input?: string; timeoutMs?: number } = {}): Promise<RunResult> => {
    const result = await made.run(script, options);
    assert.equal(result.code, 0, `\`${script}\` exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
    return result;
  };
  /** Several properties of a unit in one `systemctl show`. */
  const properties = async (names: string[], unit = 'portcullis.service'): Promise<Record<string, string>> => {
    const shown = (await inside(`systemctl show ${names.map((name) => `-p ${name}`).join(' ')} ${unit}`)).stdout;
    const values: Record<string, string> = {};
    for (const line of shown.split('\n')) {
      const equals = line.indexOf('=');
      if (equals > 0) values[line.slice(0, equals)] = line.slice(equals + 1);
    }
    assert.deepEqual(Object.keys(values).sort(), [...names].sort(), shown);
    return values;
  };
  const property = async (name: string, unit = 'portcullis.service'): Promise<string> => (await properties([name], unit))[name] as string;
  const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = STEP_MS): Promise<T> => {
    const since = Date.now();
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() - since > timeoutMs) assert.fail(`${what}: not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };
  const http = async (url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string }> => {
    const answer = await agent.fetch({ url, ...init }, STEP_MS);
    assert.ok(answer.status !== undefined, `${init.method ?? 'GET'} ${url} failed: ${answer.error}`);
    return { status: answer.status, body: answer.body ?? '' };
  };
  let apiKey = '';
  let keyId = '';
  const chatRequest = (model: string, content: string, stream = false): { url: string; method: string; headers: Record<string, string>; body: string } => ({
    url: 'http://127.0.0.1:8080/v1/chat/completions',
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content }] }),
  });
  const chat = (model: string, content = PROMPT): Promise<{ status: number; body: string }> => {
    const { url, ...init } = chatRequest(model, content);
    return http(url, init);
  };
  const serviceLines = async (): Promise<string[]> =>
    (await inside('journalctl --no-pager -o cat -u portcullis.service', { timeoutMs: 15_000 })).stdout.split('\n').filter((line) => line !== '');
  const jsonLines = async (): Promise<Array<Record<string, unknown>>> =>
    (await serviceLines()).filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);

  // Steps run in order; after a failure the rest are skipped, and the failure carries the journal.
  let broken = false;
  const step = async (name: string, body: () => Promise<void>): Promise<void> => {
    await t.test(name, { skip: broken && 'an earlier step failed', timeout: 60_000 }, async () => {
      const stepStarted = Date.now();
      try {
        await body();
      } catch (err) {
        broken = true;
        const message = err instanceof Error ? err.message : String(err);
        throw new Error(`${message}\n--- journal of the portcullis units ---\n${await journal()}`, { cause: err });
      }
      log(`${name}: ${((Date.now() - stepStarted) / 1000).toFixed(1)} s`);
    });
  };
  /** A command this test runs as docs/deploy.md gives it (less `sudo`): the page must still say it. */
  const documented = (command: string): string => {
    assert.ok(docs.includes(command), `docs/deploy.md no longer gives the command \`${command}\``);
    return command;
  };

  await step('verify the release and install from its tarball as docs/deploy.md says (no procps, so no /bin/kill)', async () => {
    // 1. Signature and checksums, where the files were downloaded; only the tarball goes in.
    const onHost = (command: string): Promise<{ stdout: string; stderr: string }> => execFileAsync('sh', ['-c', command], { cwd: made.scratch, timeout: STEP_MS });
    const signature = await onHost(documented('ssh-keygen -Y verify -f allowed_signers -I release@portcullis -n portcullis-release -s SHA256SUMS.sig < SHA256SUMS'));
    assert.match(signature.stdout, /^Good "portcullis-release" signature for release@portcullis with ED25519 key SHA256:[A-Za-z0-9+/]{43}\n$/);
    const sums = await onHost(documented('sha256sum -c SHA256SUMS'));
    assert.equal(sums.stdout, `portcullis-${version}.cdx.json: OK\n${tarball}: OK\n`);
    writeFileSync(path.join(made.root, 'root', tarball), readFileSync(path.join(made.scratch, tarball)));
    await inside('! test -e /bin/kill && ! test -e /usr/bin/kill');
    // 2. User and directories.
    await inside(documented('install -d -o root -g root -m 0755 /opt/portcullis'));
    await inside(`cd /root && ${documented(`tar -xzf portcullis-0.1.0.tgz -C /opt/portcullis --strip-components=1 --no-same-owner`).replace('portcullis-0.1.0.tgz', tarball)}`);
    await inside(documented('install -m 0644 /opt/portcullis/deploy/portcullis.sysusers /usr/lib/sysusers.d/portcullis.conf'));
    await inside(documented('systemd-sysusers'));
    await inside(documented('install -d -o root -g portcullis -m 0750 /etc/portcullis'));
    await inside(documented('install -d -o portcullis -g portcullis -m 0700 /var/lib/portcullis'));
    await inside(documented('ln -s /opt/portcullis/dist/src/cli/main.js /usr/local/bin/portcullis'));
    assert.equal((await inside('portcullis --version')).stdout, `portcullis ${version} (Node.js ${process.version})\n`);
    // 3. Credentials: the key on standard input, as pasted.
    await inside(documented(`sh -c 'umask 077; cat > /etc/portcullis/openai-api-key'`), { input: `${UPSTREAM_SECRET}\n` });
    assert.equal((await inside('stat -c %U:%G:%a /etc/portcullis/openai-api-key')).stdout.trim(), 'root:root:600');
    // The unit ships without credentials; the drop-in hands the key over.
    await inside(documented('install -d -m 0755 /etc/systemd/system/portcullis.service.d'));
    await inside(documented(`sh -c 'printf "[Service]\\nLoadCredential=openai-api-key:/etc/portcullis/openai-api-key\\n" > /etc/systemd/system/portcullis.service.d/credentials.conf'`));
    // 4. The config, checked.
    await inside(`cd /root && ${documented('install -o root -g portcullis -m 0640 config.json /etc/portcullis/config.json')}`);
    const checked = await inside('node /opt/portcullis/dist/src/cli/main.js check-config --credentials-dir /etc/portcullis /etc/portcullis/config.json');
    assert.match(checked.stdout, /\/etc\/portcullis\/config\.json: ok/);
    assert.ok(!`${checked.stdout}${checked.stderr}`.includes(UPSTREAM_SECRET), 'check-config printed the key');
    // 5. Units: the sockets only for now, so the first connection must start the service.
    await inside(
      documented(
        'install -m 0644 /opt/portcullis/deploy/portcullis.service /opt/portcullis/deploy/portcullis.socket \\\n     /opt/portcullis/deploy/portcullis-admin.socket /etc/systemd/system/',
      ).replace('\\\n    ', ''),
    );
    await inside(documented('systemctl daemon-reload'));
    await inside(documented('systemctl enable --now portcullis.socket portcullis-admin.socket'));
  });

  await step('socket activation: the first connection starts the service, which gets both sockets by name', async () => {
    const states = await made.run('systemctl is-active portcullis.socket portcullis-admin.socket portcullis.service');
    assert.equal(states.stdout, 'active\nactive\ninactive\n', 'the sockets listen, and the service runs before any connection');
    const health = await http('http://127.0.0.1:8081/healthz');
    assert.equal(health.status, 200, health.body);
    // The sockets are systemd's: the service answers on them as it starts, and systemd marks it
    // active when its READY=1 arrives, which can be just after that first answer.
    let state = '';
    await eventually(async () => (state = (await properties(['ActiveState'])).ActiveState ?? '') === 'active', 'the service active (READY=1 received)', { boundMs: 15_000, everyMs: 100 });
    assert.equal(state, 'active');
    const { MainPID: pid } = await properties(['MainPID']);
    const environ = (await inside(`tr '\\0' '\\n' < /proc/${pid}/environ`)).stdout;
    const names = /^LISTEN_FDNAMES=(.*)$/m.exec(environ)?.[1];
    assert.ok(names !== undefined && names.split(':').sort().join(':') === 'admin:api', `LISTEN_FDNAMES=${names}`);
    const listening = (await jsonLines()).find((line) => line['msg'] === 'listening');
    assert.equal(listening?.['socketActivation'], true, JSON.stringify(listening));
    assert.equal(listening?.['api'], 'http://127.0.0.1:8080');
    assert.ok((await serviceLines()).some((line) => line.includes('(socket from systemd)')), 'the banner says the socket came from systemd');
    await inside(documented('systemctl enable --now portcullis.service'));
  });

  await step('readiness: Type=notify, active, the status line says where it listens', async () => {
    assert.deepEqual(await properties(['Type', 'ActiveState', 'SubState', 'StatusText']), {
      Type: 'notify',
      ActiveState: 'active',
      SubState: 'running',
      StatusText: 'listening on http://127.0.0.1:8080/v1',
    });
    assert.equal((await made.run('systemctl is-active portcullis.service')).stdout.trim(), 'active');
    const ready = await http('http://127.0.0.1:8081/readyz');
    assert.equal(ready.status, 200, ready.body);
  });

  await step('key creation: the installed `portcullis keys create`, as the portcullis user', async () => {
    // docs/deploy.md: sudo -u portcullis PORTCULLIS_DATA_DIR=/var/lib/portcullis node .../main.js keys create ...
    // (no sudo in a minimal Debian; runuser is util-linux's and does the same for root).
    assert.ok(docs.includes('sudo -u portcullis PORTCULLIS_DATA_DIR=/var/lib/portcullis'), 'docs/deploy.md creates keys as the portcullis user');
    const created = await inside(
      'runuser -u portcullis -- env PORTCULLIS_DATA_DIR=/var/lib/portcullis portcullis keys create --name systemd-test --config /etc/portcullis/config.json --json',
    );
    const record = JSON.parse(created.stdout) as { key: string; id: string };
    assert.match(record.key, /^pcl_/);
    apiKey = record.key;
    keyId = record.id;
    assert.equal((await inside('stat -c %U:%a /var/lib/portcullis/keys.json')).stdout.trim(), 'portcullis:600');
  });

  await step('a chat request to the demo provider: 200, model service-chat (the running gateway found the new key)', async () => {
    const answer = await waitFor('a 200 for the new key', async () => {
      const tried = await chat('service-chat');
      return tried.status === 200 ? tried : undefined;
    });
    const body = JSON.parse(answer.body) as { model?: string; choices?: Array<{ message?: { content?: string } }> };
    assert.equal(body.model, 'service-chat');
    assert.match(String(body.choices?.[0]?.message?.content), /purple giraffe ledger/);
  });

  await step('credentials: the upstream key comes from $CREDENTIALS_DIRECTORY, reaches the upstream, and is in no environment or log', async () => {
    await agent.startUpstream();
    const answer = await chat('service-upstream', 'Hello upstream');
    assert.equal(answer.status, 200, answer.body);
    assert.match(answer.body, /an answer from the fake upstream/);
    assert.deepEqual(agent.upstreamRequests, [{ method: 'POST', url: '/v1/chat/completions', authorization: `Bearer ${UPSTREAM_SECRET}`, stream: false }]);
    // (systemd 252's `systemctl show` prints LoadCredential= as "[unprintable]".)
    const unit = (await inside('systemctl cat portcullis.service')).stdout;
    assert.match(unit, /^# \/etc\/systemd\/system\/portcullis\.service\.d\/credentials\.conf\n\[Service\]\nLoadCredential=openai-api-key:\/etc\/portcullis\/openai-api-key$/m, 'the credential comes from the drop-in');
    assert.doesNotMatch(readFileSync(path.join(repositoryRoot(), 'deploy', 'portcullis.service'), 'utf8'), /^LoadCredential=/m, 'the shipped unit names no credential');
    const pid = await property('MainPID');
    const environ = (await inside(`tr '\\0' '\\n' < /proc/${pid}/environ`)).stdout;
    assert.match(environ, /^CREDENTIALS_DIRECTORY=\/run\/credentials\/portcullis\.service$/m);
    assert.ok(!environ.includes(UPSTREAM_SECRET), 'the key is in the service environment');
    assert.ok(!(await inside('systemctl show portcullis.service')).stdout.includes(UPSTREAM_SECRET), 'systemctl show prints the key');
    assert.ok(!(await inside('journalctl --no-pager -o cat')).stdout.includes(UPSTREAM_SECRET), 'the journal holds the key');
    // The copy belongs to the service's user, readable by it alone (and root); no other user reads it.
    assert.equal((await inside('stat -c %U:%a /run/credentials/portcullis.service /run/credentials/portcullis.service/openai-api-key')).stdout, 'portcullis:500\nportcullis:400\n');
    assert.notEqual((await made.run('runuser -u nobody -- cat /run/credentials/portcullis.service/openai-api-key')).code, 0);
  });

  await step('the journal: one JSON access line per request, without the API key or the prompt', async () => {
    const lines = await waitFor('the access line of the chat request', async () => {
      const all = await jsonLines();
      return all.some((line) => line['msg'] === 'request' && line['alias'] === 'service-chat') ? all : undefined;
    });
    const access = lines.find((line) => line['msg'] === 'request' && line['alias'] === 'service-chat' && line['status'] === 200);
    assert.ok(access !== undefined, JSON.stringify(lines.filter((line) => line['msg'] === 'request')));
    assert.equal(access['path'], '/v1/chat/completions');
    assert.equal(access['keyId'], keyId);
    assert.equal(access['level'], 'info');
    const everything = (await inside('journalctl --no-pager -o cat')).stdout;
    assert.ok(!everything.includes(apiKey), 'the journal holds the API key');
    assert.ok(!everything.includes('purple giraffe'), 'the journal holds the prompt');
    assert.equal(await property('SyslogIdentifier'), 'portcullis');
  });

  await step('reload with a good config: served without a restart', async () => {
    const pid = await property('MainPID');
    await inside('cat > /etc/portcullis/config.json', { input: config({ 'service-reloaded': { provider: 'demo' } }) });
    await inside('systemctl reload portcullis.service');
    await waitFor('the status line after the reload', async () => ((await property('StatusText')).endsWith('; configuration reloaded') ? true : undefined));
    const answer = await chat('service-reloaded');
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(await properties(['MainPID', 'ActiveState']), { MainPID: pid, ActiveState: 'active' }, 'the reload restarted the process');
    assert.ok((await jsonLines()).some((line) => line['msg'] === 'configuration reloaded'));
  });

  await step('reload with a bad config: refused, one log line, the old config keeps serving', async () => {
    const pid = await property('MainPID');
    await inside('cat > /etc/portcullis/config.json', { input: '{ "providers": { "demo": { "type": "demo" } }, "aliases": { "service-chat": { "provider": "nope" } } }\n' });
    await inside('systemctl reload portcullis.service');
    const status = await waitFor('the status line after the refused reload', async () => {
      const text = await property('StatusText');
      return text.includes('reload refused') ? text : undefined;
    });
    assert.match(status, /^listening on http:\/\/127\.0\.0\.1:8080\/v1; reload refused: /);
    const refused = (await jsonLines()).filter((line) => String(line['msg']).startsWith('reload refused'));
    assert.equal(refused.length, 1, JSON.stringify(refused));
    assert.equal(refused[0]?.['level'], 'error');
    const answer = await chat('service-reloaded');
    assert.equal(answer.status, 200, `the old config no longer serves: ${answer.body}`);
    assert.deepEqual(await properties(['MainPID', 'ActiveState']), { MainPID: pid, ActiveState: 'active' });
    await inside('cat > /etc/portcullis/config.json', { input: config({ 'service-reloaded': { provider: 'demo' } }) });
  });

  await step('hardening: systemd-analyze security rates the live unit 1.3 OK', async () => {
    const rated = await inside('systemd-analyze security --no-pager portcullis.service | tail -1');
    assert.match(rated.stdout, /Overall exposure level for portcullis\.service: 1\.3 OK/);
  });

  await step('stop with a stream open: it drains, the stream finishes, exit 0, the last status says stopped', async () => {
    // The fake upstream sends the first words and holds the rest until let go:
    // the stream is surely open when the stop comes, and the drain waits for it.
    const { url, ...init } = chatRequest('service-upstream', 'Stream to me', true);
    const stream = agent.stream({ url, ...init }, STEP_MS);
    await waitFor('the first words of the stream', async () => (stream.received().includes('first words') ? true : undefined));
    const stopping = inside('systemctl stop portcullis.service', { timeoutMs: STEP_MS });
    const draining = await waitFor('the service draining', async () => {
      const shown = await properties(['ActiveState', 'StatusText']);
      return shown['StatusText']?.startsWith('draining') ? shown : undefined;
    });
    assert.deepEqual(draining, { ActiveState: 'deactivating', StatusText: 'draining 1 requests' });
    assert.equal(await agent.release(), 1);
    await stopping;
    assert.equal(await stream.done, true, `the stream did not end cleanly: ${stream.received()}`);
    const text = stream.received();
    assert.ok(text.includes('last words') && text.endsWith('data: [DONE]\n\n') && !text.includes('server_shutting_down'), `the stream did not finish:\n${text}`);
    const { StatusText: status = '', ...stopped } = await properties(['ActiveState', 'Result', 'ExecMainCode', 'ExecMainStatus', 'StatusText']);
    assert.deepEqual(stopped, { ActiveState: 'inactive', Result: 'success', ExecMainCode: '1' /* CLD_EXITED */, ExecMainStatus: '0' });
    assert.match(status, /^stopped: /, `the last status: ${status}`);
    assert.ok(!status.includes('draining'));
    const lines = await serviceLines();
    assert.ok(!lines.some((line) => line.includes('systemd notification failed')), lines.filter((line) => line.includes('notification')).join('\n'));
    const json = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    const shutdown = json.find((line) => line['msg'] === 'shutting down');
    assert.equal(shutdown?.['signal'], 'SIGTERM');
    assert.equal(shutdown?.['inFlight'], 1);
    const drained = json.find((line) => line['msg'] === 'drained');
    assert.ok(drained !== undefined, 'no drained line');
    assert.deepEqual(agent.upstreamRequests.map((request) => request.stream), [false, true]);
  });

  log(`${broken ? 'a step failed' : 'all steps passed'} after ${elapsed()}`);
});
