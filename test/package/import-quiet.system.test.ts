// Importing the package starts nothing: for "portcullis" and
// "portcullis/testing", installed from the tarball, a child process in an
// empty working directory imports the entry and reports what changed: active
// handles and requests (process.getActiveResourcesInfo(), which leaves out
// unref'd ones), every async resource made during the import, ref'd or not
// (an async_hooks init hook), listeners on the process events a library must
// leave to its host, sockets (the
// net.client.socket diagnostics channel and a hook on net.Socket's connect),
// and files (the working directory and the project stay as they were). A
// fixture module that does each of those things is seen by the same probe, so
// a probe that sees nothing is not blind.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repositoryRoot } from '../support/repository-root.ts';
import { baseEnv, hostProject, packedSkipReason, packRepository, run, STEP_MS, treeOf } from './packed-project.ts';

const skip = await packedSkipReason();
if (skip) console.log(`# import-quiet: skipped, ${skip}`);

/** The process events a library must never listen on: they belong to the host. */
const HOST_EVENTS = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'uncaughtException', 'unhandledRejection'];

// Run in the child: everything is measured before stdout is first touched (it
// is a handle of its own), and the import is the only thing in between. The
// modules named in argv[3] (comma-separated) are imported before measuring:
// what the host has loaded already (node:test, for a test file that runs
// contract suites; loading it opens stderr, a handle of Node's own).
const PROBE = `
import { createHook } from 'node:async_hooks';
import diagnostics from 'node:diagnostics_channel';
import net from 'node:net';
for (const preload of (process.argv[3] ?? '').split(',').filter(Boolean)) await import(preload);
// Promises, and the file reads the module loader makes of the package's own
// files, are no resources of the library's; a file it writes shows in the
// folders' snapshots, a watch (FSEVENTWRAP, STATWATCHER) here.
const LOADER_TYPES = new Set(['PROMISE', 'FSREQPROMISE', 'FILEHANDLE', 'FILEHANDLECLOSEREQ', 'FSREQCALLBACK']);
const created = [];
const hook = createHook({ init(_id, type) { if (!LOADER_TYPES.has(type)) created.push(type); } });
const sockets = [];
const onSocket = () => sockets.push('net.client.socket');
diagnostics.subscribe('net.client.socket', onSocket);
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  sockets.push('connect');
  return connect.apply(this, args);
};
const events = ${JSON.stringify(HOST_EVENTS)};
// By name: Node's loader itself listens on 'exit' while the entry module awaits.
const listening = () => Object.fromEntries(events.map((event) => [event, process.listeners(event).map((listener) => listener.name || '(anonymous)')]));
const listenersBefore = listening();
const resourcesBefore = process.getActiveResourcesInfo();
hook.enable();
const imported = await import(process.argv[2]);
hook.disable();
const resourcesAfter = process.getActiveResourcesInfo();
const listenersAfter = listening();
const report = { exports: Object.keys(imported).sort(), resourcesBefore, resourcesAfter, created, listenersBefore, listenersAfter, sockets };
process.stdout.write(JSON.stringify(report));
process.exit(0);
`;

// A module that does each thing the probe must see.
const NOISY = `
import net from 'node:net';
import { writeFileSync } from 'node:fs';
setTimeout(() => {}, 60_000);
setInterval(() => {}, 60_000).unref();
process.on('SIGTERM', function onTerm() {});
process.once('exit', function flushOnExit() {});
writeFileSync('noisy.txt', 'x');
net.connect({ host: '127.0.0.1', port: 9 }).on('error', () => {});
export const noisy = true;
`;

interface ProbeReport {
  exports: string[];
  resourcesBefore: string[];
  resourcesAfter: string[];
  created: string[];
  listenersBefore: Record<string, string[]>;
  listenersAfter: Record<string, string[]>;
  sockets: string[];
}

let tmp = '';
let project = '';

before(async () => {
  if (skip) return;
  tmp = mkdtempSync(path.join(os.tmpdir(), 'portcullis-import-quiet-'));
  const { tarball } = await packRepository(repositoryRoot(), tmp);
  project = await hostProject(tmp, tarball, 'host');
  writeFileSync(path.join(project, 'probe.mjs'), PROBE);
  writeFileSync(path.join(project, 'noisy.mjs'), NOISY);
});

after(() => {
  if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
});

/** Imports `specifier` from the project in a child whose working directory is a new, empty folder. */
async function probe(specifier: string, preload: readonly string[] = []): Promise<{ report: ProbeReport; cwdAfter: string[]; projectChanged: boolean }> {
  const cwd = path.join(tmp, `empty-${readdirSync(tmp).length}`);
  mkdirSync(cwd);
  const projectBefore = treeOf(project);
  const { stdout } = await run(process.execPath, [path.join(project, 'probe.mjs'), specifier, preload.join(',')], { cwd, env: baseEnv, timeout: STEP_MS });
  return { report: JSON.parse(stdout) as ProbeReport, cwdAfter: readdirSync(cwd), projectChanged: treeOf(project).join('\n') !== projectBefore.join('\n') };
}

describe('importing the package starts nothing', { skip }, () => {
  for (const [specifier, anExport, preload] of [
    // A host of a node:http request function has node:http loaded (see the next test for what that starts).
    ['portcullis', 'createGateway', ['node:http']],
    // The contract suites register node:test tests: a host imports them from a test file, which has node:test loaded.
    ['portcullis/testing', 'runKeyStoreContract', ['node:test']],
  ] as const) {
    test(`import "${specifier}" (after ${preload.join(', ')}): no handle, no listener on the host's process events, no socket, no file`, async () => {
      const { report, cwdAfter, projectChanged } = await probe(specifier, preload);
      assert.ok(report.exports.includes(anExport), `the import loaded the entry: ${report.exports.join(', ')}`);
      assert.deepEqual(report.resourcesAfter, report.resourcesBefore, 'active handles and requests');
      assert.deepEqual(report.created, [], 'async resources made during the import (timers, immediates, sockets, watches)');
      assert.deepEqual(report.listenersAfter, report.listenersBefore);
      const hostListeners = Object.entries(report.listenersAfter).filter(([event, names]) => names.length > 0 && !(event === 'exit' && names.join() === 'handleProcessExit'));
      assert.deepEqual(hostListeners, [], "only Node's own loader listens on a host event");
      assert.deepEqual(report.sockets, []);
      assert.deepEqual(cwdAfter, [], 'no file in the working directory');
      assert.equal(projectChanged, false, 'no file created or written in the project');
    });
  }

  // Node's own: from Node 22, the ESM face of node:http reads every export, its lazy WebSocket
  // among them, which loads undici; undici's assert loads the colour support, which opens
  // stderr (a pipe under a parent). Node 20 loads nothing for it. Pinned per line, so a
  // Node that changes it shows here, and the package's own imports are measured after it.
  test("importing node:http alone: Node's own handles on this line (nothing on 20, stderr's pipe from 22)", async () => {
    const { report, cwdAfter } = await probe('node:http');
    const added = [...report.resourcesAfter];
    for (const resource of report.resourcesBefore) added.splice(added.indexOf(resource), 1);
    const major = Number(process.versions.node.split('.')[0]);
    assert.deepEqual(added, major === 20 ? [] : ['PipeWrap'], `Node ${process.versions.node}`);
    assert.deepEqual(report.sockets, []);
    assert.deepEqual(cwdAfter, []);
  });

  test('the probe sees a timer, process listeners, a socket and a file when a module makes them', async () => {
    const { report, cwdAfter } = await probe('./noisy.mjs');
    assert.deepEqual(report.exports, ['noisy']);
    const added = [...report.resourcesAfter];
    for (const resource of report.resourcesBefore) added.splice(added.indexOf(resource), 1);
    assert.ok(added.includes('Timeout'), `a timer: ${added.join(', ')}`);
    assert.ok(added.includes('TCPSocketWrap'), `a socket: ${added.join(', ')}`);
    assert.deepEqual(report.created.filter((type) => type === 'Timeout'), ['Timeout', 'Timeout'], `the unref'd interval too: ${report.created.join(', ')}`);
    assert.ok(report.created.includes('TCPWRAP'), report.created.join(', '));
    assert.deepEqual(report.listenersAfter['SIGTERM'], ['onTerm']);
    assert.deepEqual(report.listenersAfter['exit'], [...(report.listenersBefore['exit'] ?? []), 'flushOnExit']);
    // Node 20 publishes net.client.socket before connect() is called, Node 22 after: the order is Node's.
    assert.deepEqual([...report.sockets].sort(), ['connect', 'net.client.socket']);
    assert.deepEqual(cwdAfter, ['noisy.txt']);
  });
});
