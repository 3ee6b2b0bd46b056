// messagesPassthrough and anthropicBetas: what an anthropic provider lets a
// Messages client send beyond the documented request, each mistake with its
// own message, and the union of names the Messages validator accepts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DOCUMENTED_MESSAGES_FIELDS, messagesPassthroughFields } from '../../src/config/anthropic-passthrough-config.ts';
import { Checker } from '../../src/config/config-checker.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import type { AnthropicProviderConfig, ProviderConfig } from '../../src/config/config.ts';
import { DEFAULT_ANTHROPIC_BETAS } from '../../src/config/provider-defaults.ts';
import { parseProvider } from '../../src/config/provider-types.ts';
import { DOCUMENTED_TOP_LEVEL_FIELDS, OPERATOR_CONSENT_FIELDS } from '../../src/messages/message-request-validator.ts';

function parse(value: Record<string, unknown>): { config: ProviderConfig | undefined; issues: Checker['issues'] } {
  const c = new Checker('f.json');
  return { config: parseProvider(c, value, 'providers.p'), issues: c.issues };
}

function anthropic(settings: Record<string, unknown>): { config: AnthropicProviderConfig; issues: Checker['issues'] } {
  const { config, issues } = parse({ type: 'anthropic', ...settings });
  assert.equal(config?.type, 'anthropic');
  return { config: config as AnthropicProviderConfig, issues };
}

test('defaults: no passthrough field, the documented beta list', () => {
  const { config, issues } = anthropic({});
  assert.deepEqual(issues, []);
  assert.deepEqual(config.messagesPassthrough, []);
  assert.deepEqual(config.anthropicBetas, DEFAULT_ANTHROPIC_BETAS);
  assert.ok(DEFAULT_ANTHROPIC_BETAS.includes('claude-code-20250219'));
  assert.ok(DEFAULT_ANTHROPIC_BETAS.includes('context-management-2025-06-27'));
});

test('valid lists are kept in order', () => {
  const { config, issues } = anthropic({ messagesPassthrough: ['speed', 'new_feature_2'], anthropicBetas: ['claude-code-20250219', 'new-thing-2027-01-01'] });
  assert.deepEqual(issues, []);
  assert.deepEqual(config.messagesPassthrough, ['speed', 'new_feature_2']);
  assert.deepEqual(config.anthropicBetas, ['claude-code-20250219', 'new-thing-2027-01-01']);
  assert.deepEqual(anthropic({ anthropicBetas: ['*'] }).config.anthropicBetas, ['*']);
  assert.deepEqual(anthropic({ anthropicBetas: [] }).config.anthropicBetas, []);
});

test('messagesPassthrough: each mistake named with its own message', () => {
  assert.deepEqual(anthropic({ messagesPassthrough: 'speed' }).issues, [
    { code: 'not_array', path: 'providers.p.messagesPassthrough', message: 'must be an array of at most 32 top-level Messages field names, e.g. ["speed"]' },
  ]);
  assert.equal(anthropic({ messagesPassthrough: Array.from({ length: 33 }, (_, i) => `f${i}`) }).issues[0]?.code, 'not_array');
  const { config, issues } = anthropic({ messagesPassthrough: ['Speed', 'a.b', '', 3, 'thinking', 'stop_sequence', 'speed', 'speed'] });
  const plain = 'must be a plain top-level field name: lower-case letters, digits and underscores, starting with a letter (at most 64)';
  assert.deepEqual(issues, [
    { code: 'invalid_value', path: 'providers.p.messagesPassthrough[0]', message: plain },
    { code: 'invalid_value', path: 'providers.p.messagesPassthrough[1]', message: plain },
    { code: 'invalid_value', path: 'providers.p.messagesPassthrough[2]', message: plain },
    { code: 'invalid_value', path: 'providers.p.messagesPassthrough[3]', message: plain },
    { code: 'invalid_value', path: 'providers.p.messagesPassthrough[4]', message: '"thinking" is a documented Messages field, which the gateway checks itself: remove it' },
    {
      code: 'invalid_value',
      path: 'providers.p.messagesPassthrough[5]',
      message: '"stop_sequence" is close to the documented field "stop_sequences" (checked by the gateway, no passthrough needed): fix the name or remove it',
    },
    { code: 'conflict', path: 'providers.p.messagesPassthrough[7]', message: '"speed" is listed twice' },
  ]);
  assert.deepEqual(config.messagesPassthrough, ['speed']);
});

test("the documented fields are exactly the validator's own top-level fields, once each", () => {
  assert.deepEqual([...DOCUMENTED_MESSAGES_FIELDS].sort(), [...DOCUMENTED_TOP_LEVEL_FIELDS].sort());
  assert.equal(new Set(DOCUMENTED_MESSAGES_FIELDS).size, DOCUMENTED_MESSAGES_FIELDS.length);
});

test('messagesPassthrough: every documented field is refused; the fields that change price or routing at Anthropic are the operator to allow', () => {
  for (const name of DOCUMENTED_MESSAGES_FIELDS) {
    assert.deepEqual(anthropic({ messagesPassthrough: [name] }).issues, [
      { code: 'invalid_value', path: 'providers.p.messagesPassthrough[0]', message: `"${name}" is a documented Messages field, which the gateway checks itself: remove it` },
    ]);
  }
  assert.deepEqual(OPERATOR_CONSENT_FIELDS, ['fallbacks', 'fallback_credit_token', 'billing_policy', 'speed', 'inference_geo']);
  const { config, issues } = anthropic({ messagesPassthrough: [...OPERATOR_CONSENT_FIELDS] });
  assert.deepEqual(issues, []);
  assert.deepEqual(config.messagesPassthrough, OPERATOR_CONSENT_FIELDS);
});

test('anthropicBetas: each mistake named with its own message', () => {
  assert.deepEqual(anthropic({ anthropicBetas: 'claude-code-20250219' }).issues, [
    {
      code: 'not_array',
      path: 'providers.p.anthropicBetas',
      message: 'must be an array of at most 64 anthropic-beta values, e.g. ["interleaved-thinking-2025-05-14"], or ["*"]',
    },
  ]);
  const one =
    'must be one anthropic-beta value such as "interleaved-thinking-2025-05-14": lower-case letters and digits joined by hyphens, at most 100 characters, no commas or spaces (one value per entry)';
  const { issues } = anthropic({
    anthropicBetas: ['a,b', 'Claude-Code-20250219', 'has space', 'x'.repeat(101), 'interleaved-thinkng-2025-05-14', 'pdfs-2024-09-25', 'pdfs-2024-09-25', 'context-management-2026-01-01'],
  });
  assert.deepEqual(issues, [
    { code: 'invalid_value', path: 'providers.p.anthropicBetas[0]', message: one },
    { code: 'invalid_value', path: 'providers.p.anthropicBetas[1]', message: one },
    { code: 'invalid_value', path: 'providers.p.anthropicBetas[2]', message: one },
    { code: 'invalid_value', path: 'providers.p.anthropicBetas[3]', message: one },
    {
      code: 'invalid_value',
      path: 'providers.p.anthropicBetas[4]',
      message: '"interleaved-thinkng-2025-05-14" is not a beta Anthropic names; did you mean "interleaved-thinking-2025-05-14"?',
    },
    { code: 'conflict', path: 'providers.p.anthropicBetas[6]', message: '"pdfs-2024-09-25" is listed twice' },
  ]);
  assert.deepEqual(anthropic({ anthropicBetas: ['*', 'pdfs-2024-09-25'] }).issues, [
    { code: 'conflict', path: 'providers.p.anthropicBetas[0]', message: '"*" passes every value: list it alone, or list the values without it' },
  ]);
});

test('other provider types: both settings refused, saying where they apply, and left out of the allowed list', () => {
  const where = (type: string): string =>
    `applies to "type": "anthropic" providers only (an "${type}" provider receives the gateway's translation of a Messages request, never the client's body or headers): remove it`;
  assert.deepEqual(parse({ type: 'openai', baseUrl: 'http://h/v1', messagesPassthrough: ['speed'], anthropicBetas: ['*'], bogus: 1 }).issues, [
    { code: 'conflict', path: 'providers.p.messagesPassthrough', message: where('openai') },
    { code: 'conflict', path: 'providers.p.anthropicBetas', message: where('openai') },
    {
      code: 'unknown_setting',
      path: 'providers.p.bogus',
      message:
        'unknown setting (allowed here: type, baseUrl, apiKeyEnv, apiKeyFile, headers, connectTimeoutMs, firstByteTimeoutMs, idleTimeoutMs, timeoutMs, retry, circuitBreaker, transport, tls, proxy, apiKeyHeader, maxTokensParam, responses, responsesPassthrough, responsesHostedTools, tokenCount, embeddingsEncoding)',
    },
  ]);
  assert.deepEqual(parse({ type: 'demo', anthropicBetas: [] }).issues, [{ code: 'conflict', path: 'providers.p.anthropicBetas', message: where('demo') }]);
});

test('messagesPassthroughFields: the union over anthropic providers, each name once', () => {
  const config = parseConfig(
    {
      dataDir: '/tmp/portcullis-passthrough',
      providers: {
        a: { type: 'anthropic', messagesPassthrough: ['speed', 'beta_knob'] },
        b: { type: 'anthropic', messagesPassthrough: ['beta_knob', 'other'] },
        c: { type: 'anthropic' },
        d: { type: 'demo' },
      },
      aliases: { x: { provider: 'd' } },
    },
    null,
    '/tmp',
  );
  assert.deepEqual([...messagesPassthroughFields(config)], ['speed', 'beta_knob', 'other']);
});
