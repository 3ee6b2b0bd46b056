// The packed tarball under a real systemd: a Debian 12 root (debootstrap,
// cached outside the clone: ./debian-root.ts) booted with
// `systemd-nspawn -b --register=no --keep-unit --private-network`
// (./nspawn-container.ts), the package installed into it the way
// docs/deploy.md says, and then, in order: socket activation, readiness,
// credentials, key creation as the service user, a chat request, reload of a
// good and of a bad config, the journal, the hardening score, and a stop with
// a stream draining.
//
// Needs root, systemd-nspawn, and for the first run debootstrap and Debian's
// mirror; skipped with the reason printed where any is missing or where
// nspawn cannot boot a container on this machine. Every step has its own
// bounded wait, and a failing step's message carries the unit's journal.
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { repositoryRoot } from '../support/repository-root.ts';
import { cacheDirectory, cachedRoot, findDebootstrap, mirrorProblem, systemdTestUnsupported } from './debian-root.ts';
import { BootFailure, Container, type RunResult } from './nspawn-container.ts';

const execFileAsync = promisify(execFile);
const root = repositoryRoot();
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
const docs = readFileSync(path.join(root, 'docs', 'deploy.md'), 'utf8');

const BOOT_MS = 90_000;
const STEP_MS = 30_000;
/** The upstream key: it must reach the fake upstream and appear nowhere else. */
const UPSTREAM_SECRET = `sk-systemd-test-${process.pid}-secret`;
/** A prompt that must never be logged. */
const PROMPT = 'Please repeat the words purple giraffe ledger';

const log = (line: string): void => console.log(`# systemd-boot: ${line}`);

// The config the service runs: the demo provider (streams paced, so a stream
// is still open when the stop comes) and an OpenAI-compatible upstream whose
// key is the systemd credential; the upstream is a fake on the container's
// loopback that reports the Authorization header it got.
const config = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify(
    {
      providers: {
        demo: { type: 'demo', delayMs: 200 },
        upstream: { type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', apiKeyFile: '${CREDENTIALS_DIRECTORY}/openai-api-key' },
      },
      aliases: { 'service-chat': { provider: 'demo' }, 'service-upstream': { provider: 'upstream', model: 'fake-model' }, ...extra },
    },
    null,
    2,
  ) + '\n';

// Helpers run by the host's Node in the container's network namespace.
const HTTP_CLIENT = `
const spec = JSON.parse(process.argv[2]);
try {
  const answer = await fetch(spec.url, { method: spec.method ?? 'GET', headers: spec.headers, body: spec.body, signal: AbortSignal.timeout(spec.timeoutMs) });
  process.stdout.write(JSON.stringify({ status: answer.status, body: await answer.text() }));
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String(err?.cause?.code ?? err?.message ?? err) }));
}
`;
const STREAM_CLIENT = `
const spec = JSON.parse(process.argv[2]);
try {
  const answer = await fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body, signal: AbortSignal.timeout(spec.timeoutMs) });
  console.log(JSON.stringify({ status: answer.status }));
  const decoder = new TextDecoder();
  for await (const chunk of answer.body) console.log(JSON.stringify({ chunk: decoder.decode(chunk, { stream: true }) }));
  console.log(JSON.stringify({ end: true }));
} catch (err) {
  console.log(JSON.stringify({ error: String(err?.cause?.code ?? err?.message ?? err) }));
}
`;
const FAKE_UPSTREAM = `
import http from 'node:http';
const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8').on('data', (text) => (body += text)).on('end', () => {
    console.log(JSON.stringify({ method: req.method, url: req.url, authorization: req.headers.authorization ?? null }));
    const request = JSON.parse(body || '{}');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id: 'chatcmpl-fake', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: request.model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'an answer from the fake upstream' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
    }));
  });
});
server.listen(8000, '127.0.0.1', () => console.log(JSON.stringify({ listening: true })));
`;

let container: Container | undefined;
after(async () => {
  await container?.destroy(30_000);
});

test('the packed tarball under a real systemd: socket activation, readiness, credentials, keys, chat, reload, journal, stop', { timeout: 600_000 }, async (t) => {
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
  log(`Debian root ready after ${elapsed()}`);

  // The package, packed from the build this test run made (as test/package/packed-install.system.test.ts does).
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'portcullis-systemd-'));
  const npmEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.toLowerCase().startsWith('npm_')) npmEnv[name] = value;
  npmEnv['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`;
  const packed = await execFileAsync(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp, '--cache', path.join(tmp, 'npm-cache'), '--loglevel=error'],
    { cwd: root, env: npmEnv, timeout: STEP_MS },
  );
  const tarball = (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]?.filename;
  assert.equal(tarball, `portcullis-${version}.tgz`);
  const clientScript = path.join(tmp, 'http-client.mjs');
  const streamScript = path.join(tmp, 'stream-client.mjs');
  const upstreamScript = path.join(tmp, 'fake-upstream.mjs');
  writeFileSync(clientScript, HTTP_CLIENT);
  writeFileSync(streamScript, STREAM_CLIENT);
  writeFileSync(upstreamScript, FAKE_UPSTREAM);

  // A fresh overlay of the cached root, with what an operator copies to the target.
  const made = Container.create({
    lower,
    tmp,
    log,
    prepare: (dir) => {
      writeFileSync(path.join(dir, 'root', tarball), readFileSync(path.join(tmp, tarball)));
      writeFileSync(path.join(dir, 'root', 'config.json'), config());
    },
  });
  container = made;
  try {
    await made.boot(BOOT_MS);
  } catch (err) {
    if (err instanceof BootFailure) return skip(`systemd-nspawn cannot boot a container here: ${err.message}`);
    throw err;
  }
  log(`container booted after ${elapsed()}`);
  const nodeInside = await made.run('node --version');
  if (nodeInside.stdout.trim() !== process.version) {
    return skip(`the host's Node.js (${process.execPath}) does not run inside Debian 12: ${nodeInside.stdout}${nodeInside.stderr}`);
  }

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
  const property = async (name: string, unit = 'portcullis.service'): Promise<string> => (await inside(`systemctl show -p ${name} --value ${unit}`)).stdout.trim();
  const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = STEP_MS): Promise<T> => {
    const since = Date.now();
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() - since > timeoutMs) assert.fail(`${what}: not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const runHelper = (script: string, spec: unknown): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = made.spawnInNetwork(script, [JSON.stringify(spec)]);
      let out = '';
      let err = '';
      child.stdout?.setEncoding('utf8').on('data', (text: string) => (out += text));
      child.stderr?.setEncoding('utf8').on('data', (text: string) => (err += text));
      const timer = setTimeout(() => child.kill('SIGKILL'), STEP_MS + 5_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(out);
        else reject(new Error(`helper ${path.basename(script)} exited ${code}: ${out}${err}`));
      });
    });
  const http = async (url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string }> => {
    const answer = JSON.parse(await runHelper(clientScript, { url, ...init, timeoutMs: STEP_MS })) as { status?: number; body?: string; error?: string };
    assert.ok(answer.status !== undefined, `${init.method ?? 'GET'} ${url} failed: ${answer.error}`);
    return { status: answer.status, body: answer.body ?? '' };
  };
  let apiKey = '';
  let keyId = '';
  const chat = (model: string, content = PROMPT): Promise<{ status: number; body: string }> =>
    http('http://127.0.0.1:8080/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
    });
  const serviceLines = async (): Promise<string[]> =>
    (await inside('journalctl --no-pager -o cat -u portcullis.service', { timeoutMs: 15_000 })).stdout.split('\n').filter((line) => line !== '');
  const jsonLines = async (): Promise<Array<Record<string, unknown>>> =>
    (await serviceLines()).filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);

  // Steps run in order; after a failure the rest are skipped, and the failure carries the journal.
  let broken = false;
  const step = async (name: string, body: () => Promise<void>): Promise<void> => {
    await t.test(name, { skip: broken && 'an earlier step failed', timeout: 120_000 }, async () => {
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

  await step('install from the tarball as docs/deploy.md says (no procps, so no /bin/kill)', async () => {
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
    assert.equal(await property('ActiveState', 'portcullis.socket'), 'active');
    assert.equal(await property('ActiveState', 'portcullis-admin.socket'), 'active');
    assert.equal(await property('ActiveState'), 'inactive', 'the service runs before any connection');
    const health = await http('http://127.0.0.1:8081/healthz');
    assert.equal(health.status, 200, health.body);
    assert.equal(await property('ActiveState'), 'active');
    const pid = await property('MainPID');
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
    assert.equal(await property('Type'), 'notify');
    assert.equal(await property('ActiveState'), 'active');
    assert.equal(await property('SubState'), 'running');
    assert.equal((await made.run('systemctl is-active portcullis.service')).stdout.trim(), 'active');
    assert.equal(await property('StatusText'), 'listening on http://127.0.0.1:8080/v1');
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
    const upstream = made.spawnInNetwork(upstreamScript, []);
    let seen = '';
    upstream.stdout?.setEncoding('utf8').on('data', (text: string) => (seen += text));
    upstream.stderr?.setEncoding('utf8').on('data', (text: string) => (seen += text));
    try {
      await waitFor('the fake upstream listening', async () => (seen.includes('"listening"') ? true : undefined));
      const answer = await chat('service-upstream', 'Hello upstream');
      assert.equal(answer.status, 200, answer.body);
      assert.match(answer.body, /an answer from the fake upstream/);
      const got = seen.split('\n').filter((line) => line.startsWith('{"method"')).map((line) => JSON.parse(line) as { authorization: string | null });
      assert.deepEqual(got.map((request) => request.authorization), [`Bearer ${UPSTREAM_SECRET}`]);
    } finally {
      upstream.kill('SIGKILL');
    }
    // (systemd 252's `systemctl show` prints LoadCredential= as "[unprintable]".)
    assert.match((await inside('systemctl cat portcullis.service')).stdout, /^LoadCredential=openai-api-key:\/etc\/portcullis\/openai-api-key$/m);
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
    assert.equal(await property('MainPID'), pid, 'the reload restarted the process');
    assert.equal(await property('ActiveState'), 'active');
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
    assert.equal(await property('MainPID'), pid);
    assert.equal(await property('ActiveState'), 'active');
    await inside('cat > /etc/portcullis/config.json', { input: config({ 'service-reloaded': { provider: 'demo' } }) });
  });

  await step('hardening: systemd-analyze security rates the live unit 1.3 OK', async () => {
    const rated = await inside('systemd-analyze security --no-pager portcullis.service | tail -1');
    assert.match(rated.stdout, /Overall exposure level for portcullis\.service: 1\.3 OK/);
  });

  await step('stop with a stream open: it drains, the stream finishes, exit 0, the last status says stopped', async () => {
    // 20 words at 200 ms each: about 4 s of stream, well inside the 30 s drain.
    const words = Array.from({ length: 20 }, (_, i) => `word${i}`).join(' ');
    const stream: ChildProcess = made.spawnInNetwork(streamScript, [
      JSON.stringify({
        url: 'http://127.0.0.1:8080/v1/chat/completions',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'service-chat', stream: true, messages: [{ role: 'user', content: words }] }),
        timeoutMs: 60_000,
      }),
    ]);
    let out = '';
    stream.stdout?.setEncoding('utf8').on('data', (text: string) => (out += text));
    stream.stderr?.setEncoding('utf8').on('data', (text: string) => (out += text));
    const streamEnded = new Promise<void>((resolve) => stream.on('close', () => resolve()));
    const received = (): string =>
      out
        .split('\n')
        .filter((line) => line.startsWith('{"chunk"'))
        .map((line) => (JSON.parse(line) as { chunk: string }).chunk)
        .join('');
    await waitFor('the first words of the stream', async () => (received().includes('word0') ? true : undefined));
    const stopped = Date.now();
    await inside('systemctl stop portcullis.service', { timeoutMs: 60_000 });
    log(`systemctl stop returned after ${Date.now() - stopped} ms`);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([streamEnded, new Promise((resolve) => (timer = setTimeout(resolve, STEP_MS)))]);
    clearTimeout(timer);
    const text = received();
    assert.ok(out.includes('{"end":true}'), `the stream did not end cleanly: ${out}`);
    const finished = text.includes('data: [DONE]') && text.includes('word19');
    const endedByShutdown = text.includes('server_shutting_down');
    assert.ok(finished || endedByShutdown, `the stream neither finished nor got the shutdown frame:\n${text}`);
    assert.equal(await property('ActiveState'), 'inactive');
    assert.equal(await property('Result'), 'success');
    assert.equal(await property('ExecMainCode'), '1'); // CLD_EXITED
    assert.equal(await property('ExecMainStatus'), '0');
    const status = await property('StatusText');
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
    log(`stream ${finished ? 'finished' : 'ended with the shutdown frame'}; last status: ${status}`);
  });

  log(`${broken ? 'a step failed' : 'all steps passed'} after ${elapsed()}`);
});
