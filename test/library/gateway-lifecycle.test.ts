// The embedded gateway's life at its edges: a host logger that throws (called
// where a throw has no caller: a response's 'close' listener), close() while
// listen() binds, reload() after close().
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createGateway } from '../../src/library/create-gateway.ts';
import { guardLogger } from '../../src/log/guarded-logger.ts';
import { within } from '../support/eventually.ts';
import { freshDir, memoryTempDir } from '../support/temp-dir.ts';
import { DEMO, quietLogger } from './demo-config.ts';

const root = memoryTempDir('library-lifecycle');

/** What the process writes to stderr while `run` runs (the guard's reports), and every uncaught exception meanwhile. */
async function watchingProcess<T>(run: () => Promise<T>): Promise<{ result: T; stderr: string[]; uncaught: unknown[] }> {
  const stderr: string[] = [];
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown): void => void uncaught.push(err);
  const realWrite = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => (stderr.push(String(chunk)), true)) as typeof process.stderr.write;
  process.on('uncaughtException', onUncaught);
  try {
    return { result: await run(), stderr, uncaught };
  } finally {
    process.stderr.write = realWrite;
    process.off('uncaughtException', onUncaught);
  }
}

describe('a host logger that throws', () => {
  test('guardLogger: each call that throws is caught; the first is reported once without the fields, the count at reportFailures()', () => {
    const lines: string[] = [];
    const calls: string[] = [];
    const guarded = guardLogger(
      {
        debug: (msg) => void calls.push(`debug ${msg}`),
        info: () => {
          throw new Error('log pipeline down');
        },
        warn: () => {
          throw new Error('log pipeline down');
        },
        error: (msg) => void calls.push(`error ${msg}`),
      },
      (line) => void lines.push(line),
    );
    guarded.info('request', { keyName: 'team-secret-name', status: 200 });
    guarded.warn('a warning', { path: '/private/place' });
    guarded.debug('still here');
    guarded.error('and here');
    assert.deepEqual(calls, ['debug still here', 'error and here']);
    assert.equal(guarded.failures, 2);
    assert.deepEqual(lines, [
      'portcullis: the host\'s logger threw on a record at level info ("request"): Error: log pipeline down; the gateway keeps serving, and records its logger throws on are lost (counted at close)\n',
    ]);
    guarded.reportFailures();
    guarded.reportFailures();
    assert.deepEqual(lines.slice(1), ["portcullis: the host's logger threw on 2 records in all; they were not logged\n"]);
  });

  test('guardLogger: a logger that never throws reports nothing', () => {
    const lines: string[] = [];
    const guarded = guardLogger({ debug: () => {}, info: () => {}, warn: () => {}, error: () => {} }, (line) => void lines.push(line));
    guarded.info('request', { status: 200 });
    guarded.reportFailures();
    assert.deepEqual([guarded.failures, lines], [0, []]);
  });

  test('createGateway: a host logger that throws on every call (the access line in a response\'s close listener too) leaves the host serving, no uncaught exception', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    let broken = false;
    let thrown = 0;
    const down = (): void => {
      if (!broken) return;
      thrown++;
      throw new Error('log pipeline down');
    };
    const gateway = await createGateway({ config: { ...DEMO, dataDir }, env: {}, logger: { debug: down, info: down, warn: down, error: down } });
    broken = true;
    const server = http.createServer((req, res) => gateway.handle(req, res)).listen(0, '127.0.0.1');
    await within(new Promise((resolve) => server.once('listening', resolve)), 'the host server listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { result, stderr, uncaught } = await watchingProcess(async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${url}/healthz`);
        await res.arrayBuffer();
        statuses.push(res.status);
        // The access line is written once the response closed: let that happen before the next request.
        await new Promise((resolve) => setImmediate(resolve));
      }
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await gateway.close({ drainTimeoutMs: 0 });
      return statuses;
    });
    assert.deepEqual(result, [200, 200]);
    assert.deepEqual(uncaught, []);
    assert.ok(thrown >= 2, `the host logger was called ${thrown} times`);
    assert.deepEqual(stderr, [
      stderr[0],
      `portcullis: the host's logger threw on ${thrown} records in all; they were not logged\n`,
    ]);
    assert.match(stderr[0] ?? '', /^portcullis: the host's logger threw on a record at level (debug|info|warn|error) \("[^"]*"\): Error: log pipeline down; the gateway keeps serving/);
  });
});

describe('close() while listen() binds', () => {
  test('listen() rejects naming the close, close() resolves, and nothing listens', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const gateway = await createGateway({ config: { ...DEMO, dataDir }, env: {}, logger: quietLogger() });
    const listening = gateway.listen({ port: 0, host: '127.0.0.1' }).then(
      (address) => `listening at ${address.url}`,
      (error: unknown) => `refused: ${error instanceof Error ? error.message : String(error)}`,
    );
    const report = await within(gateway.close({ drainTimeoutMs: 0 }), 'close() during listen()');
    assert.deepEqual(report, { finished: 0, endedWithError: 0, refused: 0 });
    // Settled already; the bound only turns a hang into a failure.
    assert.equal(await within(listening, 'listen() settling after close()'), 'refused: the gateway was closed while listen() ran: nothing listens; make a new gateway to listen again');
    await assert.rejects(gateway.listen({ port: 0, host: '127.0.0.1' }), { message: 'listen() after close(): make a new gateway' });
  });
});

describe('close() right after listen() resolved', () => {
  test('the drain begins in the close() call: draining is true when it returns, and the listener is closed', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const gateway = await createGateway({ config: { ...DEMO, dataDir }, env: {}, logger: quietLogger() });
    const { url } = await gateway.listen({ port: 0, host: '127.0.0.1' });
    const closing = gateway.close({ drainTimeoutMs: 0 });
    assert.equal(gateway.draining, true);
    assert.deepEqual(await within(closing, 'close()'), { finished: 0, endedWithError: 0, refused: 0 });
    await assert.rejects(fetch(`${url}/healthz`));
  });
});

describe('reload() after close()', () => {
  test('refused as closed; nothing is read, swapped or appended to the audit chain', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const config = { ...DEMO, dataDir };
    const gateway = await createGateway({ config, env: {}, logger: quietLogger() });
    const chain = (): string => (existsSync(path.join(dataDir, 'audit.jsonl')) ? readFileSync(path.join(dataDir, 'audit.jsonl'), 'utf8') : '');
    await gateway.close({ drainTimeoutMs: 0 });
    const before = chain();
    let read = 0;
    const outcome = await gateway.reload(() => (read++, config));
    assert.deepEqual(outcome, {
      ok: false,
      issues: [{ code: 'invalid_value', path: '', message: 'the gateway is closed: make a new gateway to reload' }],
      problem: 'the gateway is closed: make a new gateway to reload',
    });
    assert.equal(read, 0);
    assert.equal(chain(), before);
  });

  test('a reload() under way when close() begins leaves its record before the chain closes', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const config = { ...DEMO, dataDir };
    const gateway = await createGateway({ config, env: {}, logger: quietLogger() });
    const refused = gateway.reload({ ...config, colour: 'blue' });
    await gateway.close({ drainTimeoutMs: 0 });
    assert.equal((await refused).ok, false);
    const actions = readFileSync(path.join(dataDir, 'audit.jsonl'), 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { action: string }).action);
    assert.deepEqual(actions.slice(-1), ['config.reload_refused']);
  });
});
