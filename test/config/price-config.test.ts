// Prices per million tokens on aliases and targets, and the currency
// they are in. Only the config holds prices; these tests pin how they are
// checked, inherited and reported.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, DEFAULT_IMAGE_TOKENS } from '../../src/config/config.ts';
import { loadConfig } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { repositoryRoot } from '../support/repository-root.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-prices-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const providers = {
  openai: { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' },
  claude: { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' },
  demo: { type: 'demo' },
};

function parse(aliases: unknown, extra: Record<string, unknown> = {}): ReturnType<typeof parseConfig> {
  return parseConfig({ providers, aliases, ...extra }, '/etc/portcullis.json', dir);
}

/** The problems of a config that must not parse, as [path, message]. */
function problems(aliases: unknown, extra: Record<string, unknown> = {}): string[][] {
  try {
    parse(aliases, extra);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.issues.map((i) => [i.path, i.message]);
  }
  assert.fail('the config parsed');
}

test('without prices: the currency is USD, aliases and their targets are unpriced, demo targets are free', () => {
  const c = parse({ chat: { provider: 'openai', model: 'gpt-4o-mini' }, demo: { provider: 'demo' } });
  assert.equal(c.currency, 'USD');
  assert.equal(c.aliases['chat']?.price, null);
  assert.equal(c.aliases['chat']?.targets[0]?.price, null);
  assert.equal(c.aliases['chat']?.imageTokens, DEFAULT_IMAGE_TOKENS);
  assert.equal(DEFAULT_IMAGE_TOKENS, 2000);
  assert.equal(c.aliases['demo']?.price, null);
  assert.deepEqual(c.aliases['demo']?.targets[0]?.price, { input: 0, cachedInput: 0, output: 0 });
});

test("a target's own price wins, else the alias's; cachedInput defaults to input; a priced demo target is charged", () => {
  const c = parse(
    {
      fast: {
        targets: [
          { provider: 'openai', model: 'gpt-4o-mini', price: { input: 0.15, cachedInput: 0.075, output: 0.6 } },
          { provider: 'claude', model: 'claude-haiku-4-5', priority: 1 },
          { provider: 'demo', model: 'demo-fast', priority: 2 },
        ],
        price: { input: 1, output: 5 },
        imageTokens: 1600,
      },
      shorthand: { provider: 'openai', model: 'gpt-4.1', price: { input: 2, cachedInput: 0.5, output: 8 } },
      'demo-priced': { targets: [{ provider: 'demo', price: { input: 0.000001, output: 10000 } }] },
    },
    { currency: 'EUR' },
  );
  assert.equal(c.currency, 'EUR');
  const fast = c.aliases['fast'];
  assert.deepEqual(fast?.price, { input: 1, cachedInput: 1, output: 5 });
  assert.equal(fast?.imageTokens, 1600);
  assert.deepEqual(
    fast?.targets.map((t) => t.price),
    [
      { input: 0.15, cachedInput: 0.075, output: 0.6 },
      { input: 1, cachedInput: 1, output: 5 },
      // The alias's price is given, so the demo target inherits it like any other.
      { input: 1, cachedInput: 1, output: 5 },
    ],
  );
  assert.deepEqual(c.aliases['shorthand']?.targets[0]?.price, { input: 2, cachedInput: 0.5, output: 8 });
  assert.deepEqual(c.aliases['shorthand']?.price, { input: 2, cachedInput: 0.5, output: 8 });
  assert.deepEqual(c.aliases['demo-priced']?.targets[0]?.price, { input: 0.000001, cachedInput: 0.000001, output: 10000 });
  assert.equal(c.aliases['demo-priced']?.price, null);
});

test('zero is a price, and the edges 0.000001 and 10000 pass', () => {
  const c = parse({ a: { provider: 'openai', price: { input: 0, cachedInput: 0, output: 0 } }, b: { provider: 'openai', price: { input: 10000, cachedInput: 0.000001, output: 1.123456 } } });
  assert.deepEqual(c.aliases['a']?.price, { input: 0, cachedInput: 0, output: 0 });
  assert.deepEqual(c.aliases['b']?.price, { input: 10000, cachedInput: 0.000001, output: 1.123456 });
});

test('every bad price is named by its path, all in one pass', () => {
  const range = 'must be a number from 0 to 10000: the price of a million tokens in the config\'s currency';
  const decimals = 'has more than 6 decimals; prices are per million tokens (write 0.15 for $0.15 per million, not 0.00000015 per token)';
  assert.deepEqual(
    problems({
      a: { provider: 'openai', price: { input: -0.15, output: 0.6 } },
      b: { provider: 'openai', price: { input: 10000.5, output: '0.6' } },
      c: { provider: 'openai', price: { input: 0.00000015, output: 0.1234567 } },
      d: { provider: 'openai', price: { input: 0.15 } },
      e: { provider: 'openai', price: { output: 0.6, cachedinput: 0.1 } },
      f: { provider: 'openai', price: { input: 0.15, cachedInput: 0.3, output: 0.6 } },
      g: { provider: 'openai', price: 0.15 },
      h: { targets: [{ provider: 'openai', price: { input: null, output: 1 } }] },
    }),
    [
      ['aliases.a.price.input', range],
      ['aliases.b.price.input', range],
      ['aliases.b.price.output', range],
      ['aliases.c.price.input', decimals],
      ['aliases.c.price.output', decimals],
      ['aliases.d.price.output', 'is required'],
      ['aliases.e.price.cachedinput', "unknown setting; did you mean 'cachedInput'?"],
      ['aliases.e.price.input', 'is required'],
      ['aliases.f.price.cachedInput', 'must not exceed input (0.15): cached prompt tokens are billed at a discount'],
      ['aliases.g.price', 'must be an object'],
      ['aliases.h.targets[0].price.input', range],
    ],
  );
});

test('a price with trailing zeros in the file is read as the number it is', () => {
  const file = path.join(dir, 'zeros.json');
  writeFileSync(file, '{"providers":{"demo":{"type":"demo"}},"aliases":{"a":{"provider":"demo","price":{"input":0.1500000000,"output":6E-1}}}}');
  assert.deepEqual(loadConfig({ configPath: file, env: {}, cwd: dir }).aliases['a']?.price, { input: 0.15, cachedInput: 0.15, output: 0.6 });
});

test('imageTokens is an integer from 1 to 1000000; currency a three-letter code in capitals', () => {
  assert.deepEqual(problems({ a: { provider: 'openai', imageTokens: 0 }, b: { provider: 'openai', imageTokens: 2.5 }, c: { provider: 'openai', imageTokens: 1_000_001 } }), [
    ['aliases.a.imageTokens', 'must be an integer from 1 to 1000000'],
    ['aliases.b.imageTokens', 'must be an integer from 1 to 1000000'],
    ['aliases.c.imageTokens', 'must be an integer from 1 to 1000000'],
  ]);
  assert.equal(parse({ a: { provider: 'openai', imageTokens: 1 } }).aliases['a']?.imageTokens, 1);
  const currency = 'must be a three-letter ISO 4217 code in capitals, such as "USD" or "EUR"';
  for (const bad of ['usd', 'US', 'USDT', '', 840, null]) {
    assert.deepEqual(problems({ a: { provider: 'openai' } }, { currency: bad }), [['currency', currency]], String(bad));
  }
  assert.equal(parse({ a: { provider: 'openai' } }, { currency: 'JPY' }).currency, 'JPY');
});

test('the documented example in docs/config.md parses to the prices it shows', () => {
  const docs = readFileSync(path.join(repositoryRoot(), 'docs', 'config.md'), 'utf8');
  const section = docs.slice(docs.indexOf('## Prices'));
  const json = section.slice(section.indexOf('```json') + '```json'.length, section.indexOf('```', section.indexOf('```json') + 7));
  const c = parseConfig(JSON.parse(json), 'docs/config.md', dir);
  assert.equal(c.currency, 'USD');
  assert.deepEqual(c.aliases['service-chat']?.targets.map((t) => [t.model, t.price]), [
    ['gpt-4o-mini', { input: 0.15, cachedInput: 0.075, output: 0.6 }],
    ['claude-haiku-4-5', { input: 1, cachedInput: 0.1, output: 5 }],
  ]);
  assert.deepEqual(c.aliases['service-vision']?.targets.map((t) => [t.model, t.price]), [['claude-sonnet-4-5', { input: 3, cachedInput: 0.3, output: 15 }]]);
  assert.equal(c.aliases['service-vision']?.imageTokens, 1600);
  assert.deepEqual(c.aliases['service-local']?.targets[0]?.price, null);
  assert.deepEqual(c.aliases['service-demo']?.targets[0]?.price, { input: 0, cachedInput: 0, output: 0 });
});
