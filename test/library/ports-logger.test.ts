// The logger contract against the built-in JSON-lines logger and a host-written
// one (public types only), and through an embedded gateway: the host logger's
// 'request' record of a real request carries every documented field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LogFields, Logger } from '../../src/api/ports.ts';
import { createLogger } from '../../src/log/logger.ts';
import { REQUEST_RECORD_FIELDS, runLoggerContract, type LoggedRecord } from '../../src/testing/logger-contract.ts';
import { postChat, startPortsGateway } from './ports-harness.ts';

runLoggerContract('the built-in JSON-lines logger', () => {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(line) });
  return {
    logger,
    records: () =>
      lines.map((line): LoggedRecord => {
        const { time: _time, level, msg, ...fields } = JSON.parse(line) as { time: string; level: LoggedRecord['level']; msg: string };
        return { level, msg, fields };
      }),
  };
});

/** As a host writes one: records into its own structured logger (here an array), fields copied. */
function hostLogger(): { logger: Logger; kept: LoggedRecord[] } {
  const kept: LoggedRecord[] = [];
  const at = (level: LoggedRecord['level']) => (msg: string, fields?: LogFields) => void kept.push({ level, msg, fields: { ...fields } });
  return { kept, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

runLoggerContract('a host logger', () => {
  const { logger, kept } = hostLogger();
  return { logger, records: () => kept };
});

test("an embedded gateway's request record: every documented field, null not undefined", async () => {
  const gw = await startPortsGateway();
  try {
    const { key, record } = await gw.state.keys.create('client');
    assert.equal((await postChat(gw, key)).status, 200);
    const line = gw.logs.find((l) => l['msg'] === 'request');
    const { time: _time, level: _level, msg: _msg, ...fields } = line ?? {};
    // Every documented field; a door adds its own (traceId, upstreamMs, cachedTokens on chat).
    assert.deepEqual(REQUEST_RECORD_FIELDS.filter((field) => !Object.hasOwn(fields, field)), []);
    assert.deepEqual(Object.keys(fields).filter((field) => !(REQUEST_RECORD_FIELDS as readonly string[]).includes(field)).sort(), ['cachedTokens', 'traceId', 'upstreamMs']);
    assert.equal(Object.values(fields).includes(undefined), false);
    assert.deepEqual([fields['keyId'], fields['status'], fields['alias'], fields['completed'], fields['error']], [record.id, 200, 'service-fake', true, null]);
  } finally {
    await gw.close();
  }
});
