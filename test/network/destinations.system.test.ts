// Every address `portcullis serve` connects to, as the kernel saw it.
//
// The compiled server runs under strace (every connect, sendto, sendmsg and
// sendmmsg of every thread, native code and child processes included, with
// the socket address it named) in a mount namespace of its own
// (./traced-serve.ts). Its config names one of each outbound kind the
// gateway has, each on loopback on a port of its own, so each is one
// address:port below:
//
//   upstream   providers.direct.baseUrl, by the name upstream.quiet.test
//   proxy      providers.proxied.proxy, by the name proxy.quiet.test (a real
//              tinyproxy); the provider behind it, at 127.0.0.1, must never
//              be reached by the gateway itself
//   redis      state.redis.url, by the name redis.quiet.test (a real redis-server)
//   collector  telemetry.otlp.endpoint, by the name collector.quiet.test
//   issuer     admin.oidc.issuer, a real oidc-provider at 127.0.0.1 (http:// is
//              accepted for a loopback address only)
//
//   NOTIFY_SOCKET  set as systemd sets it, a python3 stand-in for systemd's
//              socket (../cli/notify-receiver.ts); /usr/bin/systemd-notify,
//              spawned once per message, is the one child process
//
// The run goes through start, requests (chat streamed and not, through each
// provider; the key checked on /v1/models and a wrong key refused; a single
// sign-on at the admin listener, which makes the gateway fetch the issuer's
// discovery document, redeem the code and read its keys), a reload (SIGHUP)
// and a shutdown (SIGTERM, exit 0), and the set of destinations of each phase
// is asserted whole, with the programs that ran. Phases are told apart by
// strace's clock, which is the one Date.now() reads; a phase ends once what it
// started is over (the notification helper has exited, the spans have left).
// A second case runs serve with no config file at all (the embedded default,
// the demo provider) through start, a chat and SIGTERM: no AF_INET or
// AF_INET6 address may show.
//
// DNS only for the configured names: the namespace's /etc/hosts maps the four
// names above to 127.0.0.1 and nothing else, and its /etc/resolv.conf names
// 127.53.0.1, a loopback address where nothing plausible listens (checked in
// /proc/net before the run). A lookup of any other name would be a datagram
// to port 53 in the trace (and fail at once); the test asserts there is none
// at all, so every name the gateway resolved came from that file.
// Two local calls show where glibc looks something up, and neither leaves the
// machine: a NETLINK_ROUTE request to the kernel (nl_pid=0: which address families
// the host has, for getaddrinfo's AI_ADDRCONFIG) at each name lookup, and a
// connect to the name service cache daemon's socket at start, where the
// first user lookup (the process's own user name, os.userInfo()) and the
// first name lookup try it (refused where no nscd runs; glibc then leaves it
// alone for its next 100 lookups of that kind). The issuer is an address, so
// its requests look nothing up.
//
// The collector answers with `Connection: close`, so each export opens a
// connection of its own and shows in the phase that sent it. A chat request
// makes 4 spans; batches of 12 and a 60 s schedule make the first three chats
// one export, and leave a fourth chat's spans queued at SIGTERM: the final
// flush.
//
// Run: npm run build:test && node dist/test/support/suite/run-suite.js dist/test/network/destinations.system.test.js
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { startNotifyReceiver } from '../cli/notify-receiver.ts';
import { portcullis } from '../cli/portcullis-in-process.ts';
import { skipUnlessCompiled } from '../cli/serve-process.ts';
import { request } from '../gateway/harness.ts';
import { SYSTEMD_NOTIFY_COMMAND } from '../../src/ops/systemd-notify.ts';
import { startProvider } from '../oidc/provider-harness.ts';
import { startOtlpReceiver } from '../telemetry/otlp-receiver.ts';
import { freePort } from '../support/processes.ts';
import { startRedisServer } from '../support/redis-server.ts';
import { SCRIPTED_UPSTREAM_KEY, startScriptedOpenAI } from '../support/scripted-upstreams.ts';
import { tempDir } from '../support/temp-dir.ts';
import { startTinyproxy, tinyproxyMissing } from '../support/tinyproxy.ts';
import { ssoLogin } from '../oidc/sso-login.ts';
import { eventually, within } from '../support/eventually.ts';
import { describeDestination, parseStrace, type TracedCall } from './strace-connects.ts';
import { nameserverListeners, spawnTracedServe, tracingMissing, WAIT_MS, type TracedServe } from './traced-serve.ts';

const skip = skipUnlessCompiled || tracingMissing() || tinyproxyMissing();
const NAMES = { upstream: 'upstream.quiet.test', proxy: 'proxy.quiet.test', redis: 'redis.quiet.test', collector: 'collector.quiet.test' };
const NSCD = 'AF_UNIX /var/run/nscd/socket';
const NETLINK = 'AF_NETLINK NETLINK_ROUTE nl_pid=0, nl_groups=00000000';
const CLIENT_ID = 'portcullis';
const CLIENT_SECRET = 'the quiet test client secret, 32+ characters';
const SPANS_PER_CHAT = 4;

const dir = tempDir('network-quiet');
const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const step of cleanup.reverse()) await step();
});

type Phase = 'start' | 'requests' | 'reload' | 'shutdown';

/** Each phase's destinations, as "label" where the test knows the address and as the address itself where it does not. */
function destinationsByPhase(calls: TracedCall[], bounds: Record<Exclude<Phase, 'shutdown'>, number>, labels: Map<string, string>): Record<Phase, string[]> {
  const phases: Record<Phase, Set<string>> = { start: new Set(), requests: new Set(), reload: new Set(), shutdown: new Set() };
  for (const call of calls) {
    const phase: Phase = call.timeMs <= bounds.start ? 'start' : call.timeMs <= bounds.requests ? 'requests' : call.timeMs <= bounds.reload ? 'reload' : 'shutdown';
    const where = describeDestination(call.destination);
    const by = call.program === process.execPath ? '' : `${path.basename(call.program)}: `;
    phases[phase].add(`${by}${labels.get(where) ?? `UNEXPECTED ${where} (${call.call} on fd ${call.fd})`}`);
  }
  const sorted = (s: Set<string>): string[] => [...s].sort();
  return { start: sorted(phases.start), requests: sorted(phases.requests), reload: sorted(phases.reload), shutdown: sorted(phases.shutdown) };
}

function chat(api: string, key: string, model: string, stream: boolean): Promise<{ status: number; text: string }> {
  const body = { model, messages: [{ role: 'user', content: 'Say hello.' }], ...(stream ? { stream: true } : {}) };
  return request(api, 'POST', '/v1/chat/completions', { headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/**
 * Once the spans the gateway counts as exported (/metrics on the admin
 * listener) are `expected`: the count moves once the collector's answer is
 * read, a moment after the collector has the spans.
 */
async function exported(admin: string, expected: number): Promise<void> {
  let last = -1;
  const read = async (): Promise<boolean> => {
    const metrics = await request(admin, 'GET', '/metrics');
    last = Number(/^portcullis_trace_spans_exported_total (\d+)$/m.exec(metrics.text)?.[1] ?? -1);
    return last === expected;
  };
  await eventually(read, `${expected} spans counted as exported`, { boundMs: WAIT_MS, everyMs: 20 }).catch((error: Error) => {
    throw new Error(`${error.message} (last read: ${last})`);
  });
}

let server: TracedServe;

describe('provably quiet: what serve connects to, phase by phase', { skip }, () => {
  test('start, requests, reload, shutdown: each phase reaches exactly its configured destinations, and no name is looked up in DNS', async () => {
    const direct = await startScriptedOpenAI();
    cleanup.push(() => direct.close());
    const behindProxy = await startScriptedOpenAI();
    cleanup.push(() => behindProxy.close());
    const proxy = await startTinyproxy({});
    cleanup.push(() => proxy.stop());
    const redis = await startRedisServer();
    cleanup.push(() => redis.stop());
    const collector = await startOtlpReceiver();
    cleanup.push(() => collector.close());
    for (let i = 0; i < 8; i += 1) collector.answers.push({ status: 200, headers: { connection: 'close' } });
    const notify = await startNotifyReceiver(dir, 'notify');
    cleanup.push(() => {
      notify.child.kill('SIGKILL');
    });
    const adminPort = await freePort();
    const redirectUrl = `http://127.0.0.1:${adminPort}/sso/callback`;
    const issuer = await startProvider([{ clientId: CLIENT_ID, secret: CLIENT_SECRET, redirectUri: redirectUrl, idTokenAlg: 'RS256' }], { bob: { email: 'bob@example.com', email_verified: true } });
    cleanup.push(() => issuer.close());

    const port = (url: string): number => Number(new URL(url).port);
    const collectorPort = port(collector.url);
    const labels = new Map<string, string>([
      [`AF_INET 127.0.0.1:${port(direct.baseUrl)}`, 'upstream'],
      [`AF_INET 127.0.0.1:${proxy.port}`, 'proxy'],
      [`AF_INET 127.0.0.1:${redis.port}`, 'redis'],
      [`AF_INET 127.0.0.1:${collectorPort}`, 'collector'],
      [`AF_INET 127.0.0.1:${port(issuer.issuer)}`, 'issuer'],
      [NSCD, 'nscd (glibc: first user and name lookups)'],
      [NETLINK, 'kernel netlink (a name lookup)'],
      [`AF_UNIX ${notify.socketPath}`, 'NOTIFY_SOCKET'],
      [`AF_INET 127.0.0.1:${port(behindProxy.baseUrl)}`, 'the provider behind the proxy, reached directly'],
    ]);

    const secretFile = path.join(dir, 'oidc-client-secret');
    writeFileSync(secretFile, `${CLIENT_SECRET}\n`, { mode: 0o600 });
    const dataDir = path.join(dir, 'data');
    const redisState = (host: string): Record<string, unknown> => ({ backend: 'redis', redis: { url: `redis://${host}:${redis.port}`, keyPrefix: 'quiet:' } });
    const config = {
      dataDir,
      listen: { host: '127.0.0.1', port: 0 },
      admin: {
        port: adminPort,
        oidc: { issuer: issuer.issuer, clientId: CLIENT_ID, clientSecretFile: secretFile, redirectUrl, scopes: ['openid', 'email'], allowedUsers: ['bob@example.com'], timeoutMs: 5000 },
      },
      state: redisState(NAMES.redis),
      telemetry: { otlp: { endpoint: `http://${NAMES.collector}:${collectorPort}/v1/traces`, maxExportBatchSize: 3 * SPANS_PER_CHAT, scheduleDelayMs: 60_000 } },
      providers: {
        direct: { type: 'openai', baseUrl: `http://${NAMES.upstream}:${port(direct.baseUrl)}/v1`, apiKeyEnv: 'DIRECT_KEY' },
        proxied: { type: 'openai', baseUrl: behindProxy.baseUrl, apiKeyEnv: 'PROXIED_KEY', transport: 'node', proxy: `http://${NAMES.proxy}:${proxy.port}` },
      },
      aliases: { 'direct-chat': { provider: 'direct', model: 'upstream-model' }, 'proxied-chat': { provider: 'proxied', model: 'upstream-model' } },
      auto: { default: 'direct-chat' },
    };
    const configFile = path.join(dir, 'portcullis.json');
    writeFileSync(configFile, JSON.stringify(config));
    // The key goes into Redis from this process, which cannot resolve the namespace's names.
    const keysConfig = path.join(dir, 'keys.json');
    writeFileSync(keysConfig, JSON.stringify({ dataDir, state: redisState('127.0.0.1'), providers: { demo: { type: 'demo' } }, aliases: { 'demo-chat': { provider: 'demo' } } }));
    const created = await portcullis(['keys', 'create', '--name', 'quiet', '--config', keysConfig], { cwd: dir });
    assert.equal(created.code, 0, created.stderr);
    const key = /pcl_\S+/.exec(created.stdout)?.[0] ?? assert.fail(`no key in: ${created.stdout}`);

    const listeners = nameserverListeners();
    const bounds = { start: 0, requests: 0, reload: 0 };
    server = spawnTracedServe({ dir, args: ['--config', configFile], hostNames: Object.values(NAMES), env: { DIRECT_KEY: SCRIPTED_UPSTREAM_KEY, PROXIED_KEY: SCRIPTED_UPSTREAM_KEY, NOTIFY_SOCKET: notify.socketPath } });
    cleanup.push(() => server.kill());
    const listening = await server.line((l) => l['msg'] === 'listening', 'listening');
    // The start ends once systemd has been told too: READY=1 follows the listening line.
    assert.match((await within(notify.next(1), 'READY=1', WAIT_MS))[0] as string, /^READY=1\n/);
    await server.childrenEnded(1);
    bounds.start = Date.now();
    const api = String(listening['api']);
    const admin = String(listening['admin']);

    // Requests: each destination used at least once.
    const answers = [await chat(api, key, 'direct-chat', false), await chat(api, key, 'direct-chat', true), await chat(api, key, 'proxied-chat', false)];
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200], answers.map((a) => a.text).join('\n'));
    assert.deepEqual([direct.violations, behindProxy.violations, direct.received.length, behindProxy.received.length], [[], [], 2, 1]);
    const models = await request(api, 'GET', '/v1/models', { headers: { authorization: `Bearer ${key}` } });
    assert.equal(models.status, 200, models.text);
    const wrongKey = await request(api, 'GET', '/v1/models', { headers: { authorization: `Bearer pcl_${'0'.repeat(40)}` } });
    assert.equal(wrongKey.status, 401, wrongKey.text);
    const login = await ssoLogin(`http://127.0.0.1:${adminPort}`, 'bob');
    assert.equal(login.landedAt, '/');
    assert.notEqual(login.sessionCookie, null);
    assert.ok(issuer.requests.includes('GET /.well-known/openid-configuration') && issuer.requests.includes('POST /token') && issuer.requests.includes('GET /jwks'), issuer.requests.join(', '));
    // The three chats' spans left as one full batch; once the exporter counted it, nothing is queued.
    await within(collector.waitForSpans(3 * SPANS_PER_CHAT), "the collector's first batch", WAIT_MS);
    await exported(admin, 3 * SPANS_PER_CHAT);
    // A fourth chat's spans stay queued (under a batch, 60 s to go): the shutdown's flush.
    const queued = await chat(api, key, 'direct-chat', false);
    assert.equal(queued.status, 200, queued.text);
    bounds.requests = Date.now();

    server.child.kill('SIGHUP');
    await server.line((l) => l['msg'] === 'configuration reloaded', 'configuration reloaded');
    const reloadNotes = await within(notify.next(2), 'RELOADING=1 and READY=1', WAIT_MS);
    assert.deepEqual(reloadNotes.map((n) => /(RELOADING|READY)=1/.exec(n)?.[0]), ['RELOADING=1', 'READY=1']);
    await server.childrenEnded(3);
    bounds.reload = Date.now();

    server.child.kill('SIGTERM');
    const { code, signal, trace } = await server.finished();
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, server.output());
    assert.deepEqual(collector.exports.map((e) => e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((x) => x.spans)).length), [3 * SPANS_PER_CHAT, SPANS_PER_CHAT]);

    const parsed = parseStrace(trace);
    assert.deepEqual(parsed.unreadable, [], 'strace lines this test cannot read');
    // Programs run: the server, and systemd-notify once per notification (READY, RELOADING, READY, STOPPING, the final STATUS).
    assert.deepEqual(notify.pending().map((n) => n.split('\n').find((f) => !f.startsWith('STATUS='))?.split('=')[0] ?? 'STATUS'), ['STOPPING', 'STATUS']);
    assert.deepEqual(parsed.execs, [process.execPath, ...Array<string>(5).fill(SYSTEMD_NOTIFY_COMMAND)]);
    assert.deepEqual(
      parsed.calls.filter((c) => c.destination.port === 53).map((c) => describeDestination(c.destination)),
      [],
      `DNS traffic: a name the private /etc/hosts does not hold was looked up (before the run, bound to port 53 there: ${listeners.length === 0 ? 'nothing' : listeners.join(', ')})`,
    );
    const actual = destinationsByPhase(parsed.calls, bounds, labels);
    const expected: Record<Phase, string[]> = {
      start: ['kernel netlink (a name lookup)', 'nscd (glibc: first user and name lookups)', 'redis', 'systemd-notify: NOTIFY_SOCKET'],
      requests: ['collector', 'issuer', 'kernel netlink (a name lookup)', 'proxy', 'upstream'],
      reload: ['systemd-notify: NOTIFY_SOCKET'],
      shutdown: ['collector', 'kernel netlink (a name lookup)', 'systemd-notify: NOTIFY_SOCKET'],
    };
    const differences = (Object.keys(expected) as Phase[]).flatMap((phase) => {
      const unexpected = actual[phase].filter((d) => !expected[phase].includes(d));
      const missing = expected[phase].filter((d) => !actual[phase].includes(d));
      return unexpected.length + missing.length === 0 ? [] : [`${phase}: unexpected ${JSON.stringify(unexpected)}, missing ${JSON.stringify(missing)}`];
    });
    assert.deepEqual(differences, [], `destinations per phase differ from the configured ones:\n${differences.join('\n')}\n(addresses: ${JSON.stringify(Object.fromEntries([...labels].map(([a, l]) => [l, a])))})`);
    assert.deepEqual(actual, expected);
  });
});

describe('provably quiet: serve on the embedded default config', { skip }, () => {
  test('start, a chat request and SIGTERM on the demo provider: no AF_INET or AF_INET6 destination at all', async () => {
    const home = path.join(dir, 'default-config');
    mkdirSync(home);
    // No config file anywhere: `keys create` and `serve` both take the embedded default and its ./data.
    const created = await portcullis(['keys', 'create', '--name', 'quiet-default'], { cwd: home });
    assert.equal(created.code, 0, created.stderr);
    const key = /pcl_\S+/.exec(created.stdout)?.[0] ?? assert.fail(`no key in: ${created.stdout}`);
    const listeners = nameserverListeners();
    const demo = spawnTracedServe({ dir: home, args: ['--port', '0'], hostNames: [] });
    cleanup.push(() => demo.kill());
    const listening = await demo.line((l) => l['msg'] === 'listening', 'listening');
    const answer = await chat(String(listening['api']), key, 'service-chat', false);
    assert.equal(answer.status, 200, answer.text);
    demo.child.kill('SIGTERM');
    const { code, signal, trace } = await demo.finished();
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, demo.output());

    const parsed = parseStrace(trace);
    assert.deepEqual(parsed.unreadable, [], 'strace lines this test cannot read');
    assert.deepEqual(parsed.execs, [process.execPath]);
    const all = [...new Set(parsed.calls.map((c) => describeDestination(c.destination)))].sort();
    assert.deepEqual(
      all.filter((d) => d.startsWith('AF_INET')),
      [],
      `the embedded default reached the network (before the run, bound to port 53 on the nameserver: ${listeners.length === 0 ? 'nothing' : listeners.join(', ')})`,
    );
    assert.deepEqual(all, [NSCD]);
  });
});
