// The logger port (Logger in src/api/ports.ts): what a host's logger must keep of
// the records the gateway writes. Each record keeps its level, message and
// fields as given, and a request's record ('request', one per request) carries
// every field of REQUEST_RECORD_FIELDS, null where the gateway does not know it
// (never missing, never undefined), so a log pipeline sees one shape.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Logger } from '../api/ports.ts';
import { accessLogWriter } from '../log/access-line.ts';

/** A record as the host's logger kept it. */
export interface LoggedRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  fields: Readonly<Record<string, unknown>>;
}

/** The logger to hold to the contract, and how to read back what it kept. */
export interface LoggerUnderTest {
  /** Logs every level. */
  logger: Logger;
  /** What it kept, in order. */
  records(): readonly LoggedRecord[] | Promise<readonly LoggedRecord[]>;
}

/** The fields of a 'request' record: RequestLogFields' (src/api/ports.ts), each always present, null when not known. */
export const REQUEST_RECORD_FIELDS = [
  'requestId', 'method', 'path', 'client', 'status', 'keyId', 'alias', 'target', 'route', 'stream', 'promptTokens',
  'completionTokens', 'charge', 'chargedTokens', 'costNanos', 'cost', 'ttfbMs', 'totalMs', 'completed', 'error',
] as const;

/**
 * Registers the logger cases as node:test tests in a describe block named after `name`: each
 * record kept with its level, message and fields as given, and a request's
 * record carrying every field of REQUEST_RECORD_FIELDS (null, never missing).
 */
export function runLoggerContract(name: string, make: () => LoggerUnderTest | Promise<LoggerUnderTest>): void {
  describe(`logger contract: ${name}`, () => {
    test("a request's record: every documented field, null where not known", async () => {
      const { logger, records } = await make();
      accessLogWriter(logger, undefined)({ requestId: 'req_contract1', method: 'POST', path: '/v1/chat/completions', client: '203.0.113.7', status: 200, keyId: 'key_contract', alias: 'service-chat', promptTokens: 12, totalMs: 31, completed: true });
      const kept = await records();
      assert.equal(kept.length, 1);
      assert.equal(kept[0]?.level, 'info');
      assert.equal(kept[0]?.msg, 'request');
      const expected: Record<string, unknown> = Object.fromEntries(REQUEST_RECORD_FIELDS.map((field) => [field, null]));
      Object.assign(expected, { requestId: 'req_contract1', method: 'POST', path: '/v1/chat/completions', client: '203.0.113.7', status: 200, keyId: 'key_contract', alias: 'service-chat', promptTokens: 12, totalMs: 31, completed: true });
      assert.deepEqual({ ...kept[0]?.fields }, expected);
    });

    test('each level keeps its message and fields, in order', async () => {
      const { logger, records } = await make();
      const fields = { provider: 'openai', attempt: 2, retried: true, detail: null };
      logger.debug('one', fields);
      logger.info('two', fields);
      logger.warn('three', fields);
      logger.error('four', fields);
      assert.deepEqual(
        (await records()).map((r) => [r.level, r.msg, { ...r.fields }]),
        [['debug', 'one', fields], ['info', 'two', fields], ['warn', 'three', fields], ['error', 'four', fields]],
      );
    });

    test('a record without fields has none', async () => {
      const { logger, records } = await make();
      logger.info('started');
      assert.deepEqual((await records()).map((r) => [r.level, r.msg, { ...r.fields }]), [['info', 'started', {}]]);
    });

    test('the fields object given is not changed (the gateway reuses it)', async () => {
      const { logger, records } = await make();
      const fields = Object.freeze({ keyId: 'key_contract', status: 429 });
      logger.warn('refused', fields);
      assert.deepEqual(fields, { keyId: 'key_contract', status: 429 });
      assert.equal((await records()).length, 1);
    });
  });
}
