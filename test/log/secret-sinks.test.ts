// No secret the gateway makes passes any sink unredacted. Secrets come from
// the real generators (seeded, so a failure replays); the sinks are the log
// line, the audit trail (event, chain record, its log line), and, over the
// admin API and the API listener, audit.jsonl, GET /api/audit, the access log
// and every other log line. "Passes" means any 16 consecutive characters of a
// secret's random part appear in the sink's text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createBootstrapToken } from '../../src/admin/bootstrap-token.ts';
import type { AuditEvent } from '../../src/audit/audit-event.ts';
import { assertNoSecrets, canonicalJson, redactSecrets } from '../../src/audit/audit-record.ts';
import { createAuditTrail } from '../../src/audit/audit-trail.ts';
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { generateAdminToken } from '../../src/keys/admin-token.ts';
import { generateApiKey } from '../../src/keys/api-key.ts';
import { createLogger } from '../../src/log/logger.ts';
import { REDACTION_MIN_CHARS } from '../../src/log/secret-kinds.ts';
import { startAdminGateway, type AdminGateway } from '../admin/harness.ts';
import { freshDir, memoryTempDir } from '../support/temp-dir.ts';
import { seededRandom } from './seeded-random.ts';

const MARKER_LENGTH = 4;

/** Secrets of every marked kind, `perKind` of each, from the real generators. */
function secrets(seed: string, perKind: number): string[] {
  const random = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < perKind; i++) out.push(generateApiKey(random), generateAdminToken(random), createBootstrapToken(random).token);
  return out;
}

/** A secret where a client puts it: whole, inside a longer word, at either edge, in a sentence. */
function placements(secret: string): string[] {
  return [secret, `x${secret}`, `${secret}y`, `my ${secret} key`, `(${secret})`];
}

/** Throws naming the sink when any REDACTION_MIN_CHARS characters of the secret's random part are in `text`. */
function assertNotIn(text: string, secret: string, sink: string): void {
  const random = secret.slice(MARKER_LENGTH);
  for (let i = 0; i + REDACTION_MIN_CHARS <= random.length; i++) {
    const window = random.slice(i, i + REDACTION_MIN_CHARS);
    if (text.includes(window)) assert.fail(`${sink} holds ${secret.slice(0, 8)}... (characters ${i} to ${i + REDACTION_MIN_CHARS} of its random part)`);
  }
}

function keyCreate(name: string): AuditEvent {
  return {
    actor: { kind: 'password', id: 'admin' },
    source: '127.0.0.1',
    action: 'key.create',
    target: 'key_3fJ9aQ0pLx7cVb2Z',
    before: null,
    after: { id: 'key_3fJ9aQ0pLx7cVb2Z', name, allow: [name] },
    detail: { note: name },
  };
}

function capturingLogger(): { logger: ReturnType<typeof createLogger>; text: () => string } {
  const lines: string[] = [];
  return { logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }), text: () => lines.join('') };
}

describe('the pure sinks, 1000 secrets of each kind', () => {
  const drawn = secrets('pure-sinks', 1000);

  test('a log line: in a field, in the message, inside a longer word', () => {
    for (const secret of drawn) {
      const { logger, text } = capturingLogger();
      for (const placed of placements(secret)) {
        logger.info('key created', { name: placed, path: `/v1/${placed}` });
        logger.warn(`refused ${placed}`);
      }
      assertNotIn(text(), secret, 'the log line');
    }
  });

  test('an audit event: redacted, then it passes the record check', () => {
    for (const secret of drawn) {
      for (const placed of placements(secret)) {
        const { event, redacted } = redactSecrets(keyCreate(placed));
        assert.deepEqual(redacted, ['after.name', 'after.allow[0]', 'detail.note'], placed);
        assert.doesNotThrow(() => assertNoSecrets(event));
        assertNotIn(canonicalJson(event), secret, 'the audit event');
      }
    }
  });
});

test('the audit trail: audit.jsonl and the audit log line, 30 secrets of each kind', async () => {
  const dir = freshDir(memoryTempDir('secret-sinks'));
  const log = createFileAuditLog({ dataDir: dir });
  const { logger, text } = capturingLogger();
  const trail = createAuditTrail({ logger, log });
  const drawn = secrets('audit-trail', 30);
  for (const secret of drawn) await trail.record(keyCreate(`my ${secret} key`));
  const file = readFileSync(path.join(dir, 'audit.jsonl'), 'utf8');
  assert.equal(file.trimEnd().split('\n').length, drawn.length, 'every event was recorded');
  for (const secret of drawn) {
    assertNotIn(file, secret, 'audit.jsonl');
    assertNotIn(text(), secret, 'the log stream');
  }
  assert.equal(JSON.parse(file.split('\n')[0] as string).after.name, 'my [redacted] key');
});

describe('over the admin API and the API listener', () => {
  let gw: AdminGateway;
  let headers: Record<string, string>;
  before(async () => {
    gw = await startAdminGateway();
    const session = await gw.signInSettingPassword('a long enough password 1');
    headers = { 'content-type': 'application/json', cookie: `${session.name}=${session.value}`, 'x-csrf-token': session.csrfToken };
  });
  after(async () => {
    await gw.close();
  });

  test('key and token names, renames, paths, model names and issued tokens: none in audit.jsonl, GET /api/audit, GET /api/keys or any log line', async () => {
    // Admin tokens with a "-" or "_" among their first characters are the ones a letters-and-digits pattern missed.
    const drawn = secrets('admin-api', 2);
    const issuedTokens: string[] = [];
    drawn.push('pca_-' + generateAdminToken(seededRandom('dash')).slice(5), 'pca__' + generateAdminToken(seededRandom('underscore')).slice(5));
    const post = (route: string, body: unknown, method = 'POST') => fetch(`${gw.adminUrl}${route}`, { method, headers, body: JSON.stringify(body) });
    for (const secret of drawn) {
      const created = await post('/api/keys', { name: `x${secret}` });
      assert.equal(created.status, 201, await created.clone().text());
      const { id } = ((await created.json()) as { record: { id: string } }).record;
      const renamed = await post(`/api/keys/${id}`, { name: `${secret} (renamed)` }, 'PATCH');
      assert.equal(renamed.status, 200, await renamed.clone().text());
      const token = await post('/api/tokens', { name: secret, scopes: ['keys'], expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
      assert.equal(token.status, 201, await token.clone().text());
      // A key change the token asked for and that failed is recorded with its path (token.use detail.path).
      const issued = ((await token.json()) as { token: string }).token;
      const lookup = await fetch(`${gw.adminUrl}/api/keys/x${secret}/rotate`, { method: 'POST', headers: { authorization: `Bearer ${issued}` } });
      assert.equal(lookup.status, 404, await lookup.clone().text());
      issuedTokens.push(issued);
      const unknownPath = await fetch(`${gw.apiUrl}/v1/${secret}`);
      assert.equal(unknownPath.status, 404);
      const unknownModel = await fetch(`${gw.apiUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
        body: JSON.stringify({ model: secret, messages: [{ role: 'user', content: secret }] }),
      });
      assert.equal(unknownModel.status, 401);
    }
    await gw.usageSettled();
    const auditFile = readFileSync(path.join(gw.dataDir, 'audit.jsonl'), 'utf8');
    const auditApi = await (await fetch(`${gw.adminUrl}/api/audit?limit=1000`, { headers })).text();
    const keysApi = await (await fetch(`${gw.adminUrl}/api/keys`, { headers })).text();
    assert.equal((JSON.parse(keysApi) as { data: Array<{ name: string }> }).data.filter((k) => k.name === '[redacted] (renamed)').length, drawn.length);
    const logs = gw.logs.map((line) => JSON.stringify(line)).join('\n');
    const records = auditFile.trimEnd().split('\n').map((line) => JSON.parse(line) as { action: string; after: { name?: string } | null; detail?: { path?: string } });
    assert.deepEqual(
      records.filter((r) => r.action !== 'admin.password_set' && r.action !== 'admin.login').map((r) => [r.action, r.after?.name ?? r.detail?.path]),
      drawn.flatMap(() => [
        ['key.create', 'x[redacted]'],
        ['key.update', '[redacted] (renamed)'],
        ['token.create', '[redacted]'],
        ['token.use', '/api/keys/x[redacted]/rotate'],
      ]),
    );
    assert.ok(logs.includes('"status":404') && logs.includes('"status":401'), 'the access lines are among the logs');
    for (const secret of [...drawn, ...issuedTokens]) {
      assertNotIn(auditFile, secret, 'audit.jsonl');
      assertNotIn(auditApi, secret, 'GET /api/audit');
      assertNotIn(keysApi, secret, 'GET /api/keys (the dashboard\'s list)');
      assertNotIn(logs, secret, 'the log lines');
    }
  });
});
