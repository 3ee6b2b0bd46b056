// The "telemetry" section (src/config/telemetry-config.ts): defaults, every
// setting checked strictly with its path, export headers from the environment
// and from a headersFile, and a reload that changes it (restart-only, with
// header values never shown).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { checkConfigFile } from '../../src/cli/check-config-command.ts';
import { ConfigError } from '../../src/config/config.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { resolveOtlpHeaders, type OtlpExportConfig } from '../../src/config/telemetry-config.ts';
import { restartOnlyChanges } from '../../src/gateway/restart-settings.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-telemetry-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const minimal = {
  providers: { demo: { type: 'demo' } },
  aliases: { 'service-chat': { provider: 'demo', model: 'd' } },
  auto: { default: 'service-chat' },
};
const withTelemetry = (telemetry: unknown): Record<string, unknown> => ({ ...minimal, telemetry });

function problems(telemetry: unknown): string[] {
  try {
    parseConfig(withTelemetry(telemetry), 'portcullis.json', dir);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.issues.map((i) => `${i.path}: ${i.message}`);
  }
  return [];
}

describe('telemetry config', () => {
  test('absent: no exporter, defaults', () => {
    assert.deepEqual(parseConfig(minimal, null, dir).telemetry, { serviceName: 'portcullis', resourceAttributes: {}, samplerRatio: 1, otlp: null });
  });

  test('every setting, with the defaults filled in', () => {
    const t = parseConfig(withTelemetry({ serviceName: 'gw-eu', resourceAttributes: { 'deployment.environment.name': 'prod' }, sampler: { ratio: 0.25 }, otlp: { endpoint: 'https://otel.example:4318/v1/traces', headers: { 'X-Token': '${T}' } } }), null, dir).telemetry;
    assert.deepEqual(t, {
      serviceName: 'gw-eu',
      resourceAttributes: { 'deployment.environment.name': 'prod' },
      samplerRatio: 0.25,
      otlp: { endpoint: 'https://otel.example:4318/v1/traces', headers: { 'x-token': '${T}' }, headersFile: null, timeoutMs: 10_000, maxQueueSize: 2048, maxExportBatchSize: 512, scheduleDelayMs: 5000, maxRetries: 3 },
    });
  });

  test('each problem names its setting', () => {
    assert.deepEqual(problems({ otlp: {} }), ['telemetry.otlp.endpoint: is required (the collector\'s OTLP/HTTP traces URL, e.g. "http://127.0.0.1:4318/v1/traces")']);
    assert.deepEqual(problems({ otlp: { endpoint: 'grpc://c:4317' } }), ['telemetry.otlp.endpoint: must use http:// or https:// (OTLP over HTTP; gRPC is not supported)']);
    assert.deepEqual(problems({ otlp: { endpoint: 'http://user:pw@c:4318/v1/traces' } }), ['telemetry.otlp.endpoint: must not hold credentials; put them in telemetry.otlp.headers or headersFile']);
    assert.deepEqual(problems({ otlp: { endpoint: 'not a url' } }), ['telemetry.otlp.endpoint: must be an http:// or https:// URL, like "http://127.0.0.1:4318/v1/traces"']);
    assert.deepEqual(problems({ sampler: { ratio: 1.5 } }), ['telemetry.sampler.ratio: must be a number from 0 (no new trace recorded) to 1 (every one)']);
    assert.deepEqual(problems({ otlp: { endpoint: 'http://c/v1/traces', maxQueueSize: 10, maxExportBatchSize: 20 } }), ['telemetry.otlp.maxExportBatchSize: must not exceed telemetry.otlp.maxQueueSize (10)']);
    assert.deepEqual(problems({ resourceAttributes: { 'service.name': 'x' } }), ['telemetry.resourceAttributes.service.name: is set by telemetry.serviceName']);
    const header = problems({ otlp: { endpoint: 'http://c/v1/traces', headers: { 'content-type': 'x', 'bad name': 'x', ok: 'line\nbreak-secret' } } });
    assert.equal(header.length, 3);
    assert.match(header[0] ?? '', /^telemetry\.otlp\.headers\.content-type: is set by the exporter/);
    assert.match(header[1] ?? '', /^telemetry\.otlp\.headers\.bad name: is not an HTTP header name/);
    assert.match(header[2] ?? '', /^telemetry\.otlp\.headers\.ok: must be a string of printable ASCII/);
    assert.equal(header.join('\n').includes('break-secret'), false, 'a header value is never repeated');
    assert.deepEqual(problems({ sampler: { rate: 1 } }), ['telemetry.sampler.rate: unknown setting (allowed here: ratio)']);
    assert.deepEqual(problems({ otlp: { endpoint: 'http://c/v1/traces', timeoutMs: 5 } }), ['telemetry.otlp.timeoutMs: must be an integer from 100 to 60000']);
  });

  test('export headers: ${NAME} from the environment, more from a headersFile; missing ones stop the start', () => {
    const otlp = (extra: Partial<OtlpExportConfig>): OtlpExportConfig => ({ endpoint: 'http://c/v1/traces', headers: {}, headersFile: null, timeoutMs: 1000, maxQueueSize: 10, maxExportBatchSize: 10, scheduleDelayMs: 100, maxRetries: 0, ...extra });
    assert.deepEqual(resolveOtlpHeaders(null, otlp({ headers: { authorization: 'Bearer ${TOKEN}' } }), { TOKEN: 't0k' }), { authorization: 'Bearer t0k' });
    assert.throws(() => resolveOtlpHeaders('p.json', otlp({ headers: { authorization: 'Bearer ${TOKEN}' } }), {}), {
      message: 'p.json: telemetry.otlp.headers.authorization: environment variable TOKEN is not set or empty',
    });
    // Node would refuse such a header value at the first export (ERR_INVALID_CHAR): refused at start, the value never quoted.
    assert.throws(() => resolveOtlpHeaders('p.json', otlp({ headers: { authorization: 'Bearer ${TOKEN}' } }), { TOKEN: 'sec\u20acret\u0001' }), {
      message: 'p.json: telemetry.otlp.headers.authorization: environment variable TOKEN must be printable ASCII (at most 4096 characters) to go in a header',
    });
    const file = path.join(dir, 'otlp-headers');
    writeFileSync(file, '# the collector\'s key\n\nx-api-key: k-123\r\nx-tenant : eu\n');
    assert.deepEqual(resolveOtlpHeaders(null, otlp({ headers: { a: 'b' }, headersFile: file }), {}), { a: 'b', 'x-api-key': 'k-123', 'x-tenant': 'eu' });
    writeFileSync(file, 'x-api-key: k-123\nsecret-without-colon\n');
    assert.throws(() => resolveOtlpHeaders(null, otlp({ headersFile: file }), {}), (err: Error) => {
      assert.equal(err.message, `embedded config: telemetry.otlp.headersFile: ${file} line 2 must be "name: value" (a header name that is not reserved, a printable value)`);
      return true;
    });
    assert.throws(() => resolveOtlpHeaders(null, otlp({ headersFile: path.join(dir, 'missing') }), {}), /telemetry\.otlp\.headersFile: .*missing does not exist/);
  });

  test('a reload that changes it needs a restart; a changed header shows as a digest, never its value', () => {
    const running = parseConfig(withTelemetry({ otlp: { endpoint: 'http://c/v1/traces', headers: { authorization: 'Bearer old-secret' } } }), null, dir);
    const next = parseConfig(withTelemetry({ otlp: { endpoint: 'http://c/v1/traces', headers: { authorization: 'Bearer new-secret' } } }), null, dir);
    const changes = restartOnlyChanges(running, next);
    assert.deepEqual(changes.map((c) => c.setting), ['telemetry.otlp.headers.authorization']);
    assert.equal(JSON.stringify(changes).includes('secret'), false);
    assert.match(String(changes[0]?.running), /^sha256:[0-9a-f]{12}$/);
  });
});

test('check-config reads the export headers as serve does at start: a missing variable or headersFile is a problem', () => {
  const file = path.join(dir, 'check-telemetry.json');
  writeFileSync(
    file,
    JSON.stringify(
      withTelemetry({
        otlp: { endpoint: 'http://127.0.0.1:4318/v1/traces', headers: { authorization: 'Bearer ${OTLP_TOKEN}' }, headersFile: '${CREDENTIALS_DIRECTORY}/check-otlp-headers' },
      }),
    ),
  );
  assert.deepEqual(checkConfigFile(file, { env: { CREDENTIALS_DIRECTORY: dir }, cwd: dir, credentials: true }), {
    kind: 'problems',
    problems: [{ code: 'missing_credential', path: 'telemetry.otlp.headers.authorization', problem: 'environment variable OTLP_TOKEN is not set or empty' }],
    warnings: [],
  });
  assert.deepEqual(checkConfigFile(file, { env: { CREDENTIALS_DIRECTORY: dir, OTLP_TOKEN: 't0k' }, cwd: dir, credentials: true }), {
    kind: 'problems',
    problems: [{ code: 'missing_credential', path: 'telemetry.otlp.headersFile', problem: `${path.join(dir, 'check-otlp-headers')} does not exist` }],
    warnings: [],
  });
  writeFileSync(path.join(dir, 'check-otlp-headers'), 'x-tenant: eu\n');
  assert.equal(checkConfigFile(file, { env: { CREDENTIALS_DIRECTORY: dir, OTLP_TOKEN: 't0k' }, cwd: dir, credentials: true }).kind, 'ok');
  assert.equal(checkConfigFile(file, { env: {}, cwd: dir, credentials: false }).kind, 'ok');
});
