import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { flushUsage, parseUsageFile, readUsageFile } from '../../src/usage/usage-file.ts';
import { createUsageLedger } from '../../src/usage/usage-ledger.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-usage-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const u = (p: number, c: number, cached: number) => ({ prompt_tokens: p, completion_tokens: c, total_tokens: p + c, prompt_tokens_details: { cached_tokens: cached } });

test('the ledger counts requests, tokens and errors per key', () => {
  const ledger = createUsageLedger();
  assert.equal(ledger.dirty(), false);
  ledger.record('key_a', { usage: u(10, 5, 2), error: false });
  ledger.record('key_a', { error: true });
  ledger.record('key_b', { usage: u(1, 1, 0), error: false });
  assert.deepEqual(Object.fromEntries(ledger.drain()), {
    key_a: { requests: 2, promptTokens: 10, completionTokens: 5, cachedTokens: 2, errors: 1 },
    key_b: { requests: 1, promptTokens: 1, completionTokens: 1, cachedTokens: 0, errors: 0 },
  });
  assert.equal(ledger.dirty(), false);
});

test('flushes add to the file, so two processes add up; a failed flush keeps the counters', async () => {
  const one = createUsageLedger();
  const two = createUsageLedger();
  one.record('key_a', { usage: u(10, 5, 2), error: false });
  two.record('key_a', { usage: u(1, 2, 0), error: true });
  await Promise.all([flushUsage(dir, one), flushUsage(dir, two)]);
  assert.deepEqual(Object.fromEntries(await readUsageFile(dir)), {
    key_a: { requests: 2, promptTokens: 11, completionTokens: 7, cachedTokens: 2, errors: 1 },
  });
  writeFileSync(path.join(dir, 'usage.json'), '{"version":2}');
  one.record('key_c', { error: false });
  await assert.rejects(flushUsage(dir, one), /usage\.json: expected/);
  assert.equal(one.dirty(), true);
  assert.equal(readFileSync(path.join(dir, 'usage.json'), 'utf8'), '{"version":2}');
});

test('a corrupt usage file is an error naming the file and field, never zeros', () => {
  assert.throws(() => parseUsageFile('nope', '/d/usage.json'), { message: '/d/usage.json: is not valid JSON' });
  assert.throws(() => parseUsageFile('{"version":1,"keys":{"k":{"requests":-1}}}', '/d/usage.json'), {
    message: '/d/usage.json: keys.k.requests must be a non-negative integer',
  });
});
