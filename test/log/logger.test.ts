import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batchLines, createLogger } from '../../src/log/logger.ts';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('batchLines', () => {
  test('the lines of one turn reach the sink in one call, in order, at the end of the turn', async () => {
    const writes: string[] = [];
    const write = batchLines((text) => writes.push(text));
    write('a\n');
    write('b\n');
    write('c\n');
    assert.deepEqual(writes, []);
    await turn();
    assert.deepEqual(writes, ['a\nb\nc\n']);
  });

  test('each turn is its own call; a quiet turn writes nothing', async () => {
    const writes: string[] = [];
    const write = batchLines((text) => writes.push(text));
    write('one\n');
    await turn();
    await turn();
    write('two\n');
    await turn();
    assert.deepEqual(writes, ['one\n', 'two\n']);
  });

  test('flushOnExit: the default adds one process exit listener; false adds none, and flush() writes what is pending at once', async () => {
    const before = process.listenerCount('exit');
    const writes: string[] = [];
    const owned = batchLines((text) => writes.push(text), { flushOnExit: false });
    assert.equal(process.listenerCount('exit'), before);
    owned('a\n');
    owned('b\n');
    owned.flush();
    assert.deepEqual(writes, ['a\nb\n']);
    owned.flush();
    await turn();
    assert.deepEqual(writes, ['a\nb\n']);
    const cli = batchLines(() => undefined);
    assert.equal(process.listenerCount('exit'), before + 1);
    process.removeListener('exit', cli.flush);
    assert.equal(process.listenerCount('exit'), before);
  });

  test('a logger over it writes whole JSON lines', async () => {
    const writes: string[] = [];
    const logger = createLogger({ write: batchLines((text) => writes.push(text)), clock: () => new Date(0) });
    logger.info('request', { status: 200 });
    logger.warn('slow', { durationMs: 1.5 });
    await turn();
    assert.deepEqual(writes, [
      '{"time":"1970-01-01T00:00:00.000Z","level":"info","msg":"request","status":200}\n' +
        '{"time":"1970-01-01T00:00:00.000Z","level":"warn","msg":"slow","durationMs":1.5}\n',
    ]);
  });
});

describe('createLogger levels', () => {
  test('lines below the level are dropped; setLevel changes the level for the lines that follow', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', write: (l) => lines.push(l), clock: () => new Date(0) });
    logger.info('dropped');
    logger.warn('kept');
    assert.equal(logger.level, 'warn');
    logger.setLevel('debug');
    assert.equal(logger.level, 'debug');
    logger.debug('now kept');
    logger.setLevel('error');
    logger.warn('dropped again');
    logger.error('kept too');
    assert.deepEqual(lines, [
      '{"time":"1970-01-01T00:00:00.000Z","level":"warn","msg":"kept"}\n',
      '{"time":"1970-01-01T00:00:00.000Z","level":"debug","msg":"now kept"}\n',
      '{"time":"1970-01-01T00:00:00.000Z","level":"error","msg":"kept too"}\n',
    ]);
  });
});

describe('createLogger redaction', () => {
  test('a gateway key or token in any field or the message is written as [redacted], the rest of the line as it was', () => {
    const lines: string[] = [];
    const logger = createLogger({ write: (l) => lines.push(l), clock: () => new Date(0) });
    const token = 'pca_-3q2_7wAbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
    logger.info(`refused ${token}`, { name: `"${token}"`, path: `/v1/x${token}/y`, prefix: 'pca_-3q2', keyId: 'key_3fJ9aQ0pLx7cVb2Z' });
    assert.deepEqual(lines, [
      '{"time":"1970-01-01T00:00:00.000Z","level":"info","msg":"refused [redacted]","name":"\\"[redacted]\\"","path":"/v1/x[redacted]/y","prefix":"pca_-3q2","keyId":"key_3fJ9aQ0pLx7cVb2Z"}\n',
    ]);
  });
});
