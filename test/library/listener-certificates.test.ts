import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import { loadListenerCertificates } from '../../src/library/listener-certificates.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createInProcessPki } from '../tls/in-process-pki.ts';

const pki = createInProcessPki();
after(() => pki.cleanup());

function logsFor(days: number): Record<string, unknown>[] {
  const pair = pki.server(`listener-${days}`, ['127.0.0.1'], { days });
  const config = parseConfig(
    { listen: { tls: { certFile: pair.certFile, keyFile: pair.keyFile } }, providers: { demo: { type: 'demo' } }, aliases: { 'service-chat': { provider: 'demo' } } },
    null,
    pki.dir,
  );
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  loadListenerCertificates(config, {}, false).logServed(logger);
  return logs;
}

test('a served certificate within 30 days of its end is a warning at start, as check-config says', () => {
  const soon = logsFor(10);
  assert.deepEqual(soon.map((l) => [l['level'], l['msg']]), [['info', 'TLS certificate'], ['warn', 'TLS certificate expires soon']]);
  assert.deepEqual([soon[1]?.['listener'], soon[1]?.['expires'], soon[1]?.['withinDays']], ['listen.tls', soon[0]?.['expires'], 30]);
  assert.deepEqual(logsFor(90).map((l) => l['msg']), ['TLS certificate']);
});
