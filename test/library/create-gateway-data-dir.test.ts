// One embedded gateway per data directory: a second createGateway on a held
// dataDir is refused at start (two gateways would each rewrite budgets.json
// with only their own counts, and spending would be lost on restart), the first
// keeps serving, and after close() the directory opens again with the counts the
// first wrote. Redis state needs no hold (its counts are shared).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { Logger } from '../../src/api/ports.ts';
import { createGateway } from '../../src/library/create-gateway.ts';
import { DATA_DIR_LOCK_FILE, DataDirInUseError } from '../../src/state/data-dir-hold.ts';
import { freshDir, memoryTempDir } from '../support/temp-dir.ts';

const root = memoryTempDir('library-data-dir');
const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const config = (dataDir: string): Record<string, unknown> => ({
  dataDir,
  admin: { enabled: false },
  providers: { demo: { type: 'demo' } },
  aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } },
});
const authenticate = (): { id: string; limits: { tokenBudget: { tokens: number; period: 'day' } } } => ({ id: 'team', limits: { tokenBudget: { tokens: 1_000_000, period: 'day' } } });

async function spend(url: string): Promise<number> {
  const answer = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer host-key', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'service-chat', messages: [{ role: 'user', content: 'hello there' }] }),
  });
  assert.equal(answer.status, 200);
  return ((await answer.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
}

function journalled(dataDir: string): number {
  const journal = JSON.parse(readFileSync(path.join(dataDir, 'budgets.json'), 'utf8')) as { keys: Record<string, { tokens: Record<string, number> }> };
  return Object.values(journal.keys['team']?.tokens ?? {}).reduce((sum, n) => sum + n, 0);
}

describe('createGateway on a data directory another gateway holds', () => {
  test('the second is refused naming dataDir, this pid and what to do; the first keeps serving; after its close() a new one opens on its counts', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const first = await createGateway({ config: config(dataDir), env: {}, logger: quiet, authenticate });
    let spent = 0;
    try {
      const { url } = await first.listen({ port: 0, host: '127.0.0.1' });
      const rejection = await createGateway({ config: config(dataDir), env: {}, logger: quiet, authenticate }).then(
        () => assert.fail('the second gateway started on a held dataDir'),
        (err: unknown) => err as Error,
      );
      assert.equal(
        rejection.message,
        `cannot open the memory state backend: dataDir ${dataDir} is in use by another gateway (another gateway in this process, pid ${process.pid}); one gateway keeps its budget counts per data directory, so a second would lose spending. Give this gateway another dataDir, or use the Redis state backend ("state": {"backend": "redis"}) for several instances (docs/scaling.md).`,
      );
      assert.ok(rejection.cause instanceof DataDirInUseError);
      spent += await spend(url);
    } finally {
      await first.close();
    }
    assert.equal(existsSync(path.join(dataDir, DATA_DIR_LOCK_FILE)), false);
    const next = await createGateway({ config: config(dataDir), env: {}, logger: quiet, authenticate });
    try {
      spent += await spend((await next.listen({ port: 0, host: '127.0.0.1' })).url);
    } finally {
      await next.close();
    }
    assert.ok(spent > 0);
    assert.equal(journalled(dataDir), spent);
  });

  test('a start that fails after the hold is taken gives the directory up', async () => {
    const dataDir = path.join(freshDir(root), 'data');
    const first = await createGateway({ config: config(dataDir), env: {}, logger: quiet });
    await first.close();
    writeFileSync(path.join(dataDir, 'keys.json'), '{ not json');
    await assert.rejects(createGateway({ config: config(dataDir), env: {}, logger: quiet }), (err: Error) => !(err.cause instanceof DataDirInUseError) && /keys\.json/.test(err.message));
    assert.equal(existsSync(path.join(dataDir, DATA_DIR_LOCK_FILE)), false);
    rmSync(path.join(dataDir, 'keys.json'));
    await (await createGateway({ config: config(dataDir), env: {}, logger: quiet })).close();
  });
});
