import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { test } from 'node:test';
import { describeGuard, describeLimits, inFlagWords, KEY_SETTING_HELP, KEY_SETTING_OPTIONS, KeyOptionError, keySettingsFromFlags } from '../../src/cli/key-options.ts';
import { InvalidKeySettingError } from '../../src/keys/errors.ts';
import { parseKeySettings } from '../../src/keys/key-settings.ts';
import { NO_LIMITS, type KeyLimits } from '../../src/limits/key-limits.ts';

const FULL: KeyLimits = Object.freeze({
  requestsPerMinute: 60,
  tokensPerMinute: 100000,
  concurrentRequests: 4,
  tokenBudget: Object.freeze({ tokens: 2000000, period: 'month' as const }),
  costBudget: Object.freeze({ amount: 25.5, period: 'month' as const }),
});

/** The flags as `keys create`/`keys update` hand them over: parsed by node:util. */
function flags(...args: string[]): Record<string, string | boolean | string[] | undefined> {
  return parseArgs({ args, options: KEY_SETTING_OPTIONS, strict: true, allowPositionals: false }).values;
}

test('KEY_SETTING_OPTIONS: seven string flags and the repeatable --guard, no short forms', () => {
  assert.deepEqual(KEY_SETTING_OPTIONS, {
    allow: { type: 'string' },
    expires: { type: 'string' },
    rpm: { type: 'string' },
    tpm: { type: 'string' },
    concurrency: { type: 'string' },
    budget: { type: 'string' },
    'cost-budget': { type: 'string' },
    guard: { type: 'string', multiple: true },
  });
});

test('KEY_SETTING_HELP: one aligned line per flag', () => {
  assert.equal(
    KEY_SETTING_HELP,
    '  --allow ALIASES       Comma-separated aliases the key may use, or "all" (default all)\n' +
      '  --expires TIME        Expiry as an ISO 8601 time with a zone (2027-01-31T00:00:00Z), or "never"\n' +
      '  --rpm N               Requests per minute ("none" for unlimited)\n' +
      '  --tpm N               Tokens per minute, estimated before and settled after each call ("none")\n' +
      '  --concurrency N       Requests at once ("none")\n' +
      '  --budget N/PERIOD     Tokens per UTC day or month, e.g. 2000000/month ("none")\n' +
      '  --cost-budget AMOUNT  Money per UTC day or month in the config\'s currency, e.g. 25.50/month ("none")\n' +
      '  --guard NAME=ACTION   The egress guard for this key\'s requests, stricter than the alias\'s only: a\n' +
      '                        detector or group (secrets, personal) and off, log, mask or block, e.g.\n' +
      '                        --guard secrets=block --guard email=mask. Repeat it for each; the ones given\n' +
      '                        replace the key\'s whole guard ("none" removes it)\n',
  );
});

test('no settings flags: an empty patch (update then has nothing to change)', () => {
  assert.deepEqual(keySettingsFromFlags(flags(), null), {});
  assert.deepEqual(keySettingsFromFlags(flags(), FULL), {});
  // Flags that are not settings (name, json) are not settings either.
  assert.deepEqual(keySettingsFromFlags({ name: 'x', json: true }, FULL), {});
});

test('--allow: a trimmed list without empty entries; "all" is null', () => {
  assert.deepEqual(keySettingsFromFlags(flags('--allow', 'gpt-4o'), null), { allowedAliases: ['gpt-4o'] });
  assert.deepEqual(keySettingsFromFlags(flags('--allow', ' gpt-4o , fast,,service-auto '), null), { allowedAliases: ['gpt-4o', 'fast', 'service-auto'] });
  assert.deepEqual(keySettingsFromFlags(flags('--allow', 'all'), null), { allowedAliases: null });
  // Left to the store's check, which says "must name at least one alias".
  assert.deepEqual(keySettingsFromFlags(flags('--allow', ''), null), { allowedAliases: [] });
  assert.deepEqual(keySettingsFromFlags(flags('--allow', ' , '), null), { allowedAliases: [] });
  // Only the exact word: an alias may be called "All".
  assert.deepEqual(keySettingsFromFlags(flags('--allow', 'All'), null), { allowedAliases: ['All'] });
});

test('--expires: passed through for the store to check; "never" is null', () => {
  assert.deepEqual(keySettingsFromFlags(flags('--expires', '2027-01-31T00:00:00+01:00'), null), { expiresAt: '2027-01-31T00:00:00+01:00' });
  assert.deepEqual(keySettingsFromFlags(flags('--expires', 'never'), null), { expiresAt: null });
  assert.deepEqual(keySettingsFromFlags(flags('--expires', 'yesterday'), null), { expiresAt: 'yesterday' });
});

test('limit flags on create (no current limits): the unnamed limits are null', () => {
  assert.deepEqual(keySettingsFromFlags(flags('--rpm', '60'), null), { limits: { ...NO_LIMITS, requestsPerMinute: 60 } });
  assert.deepEqual(keySettingsFromFlags(flags('--tpm', '100000', '--concurrency', '4'), null), {
    limits: { requestsPerMinute: null, tokensPerMinute: 100000, concurrentRequests: 4, tokenBudget: null, costBudget: null },
  });
  assert.deepEqual(keySettingsFromFlags(flags('--budget', '50000/day'), null), { limits: { ...NO_LIMITS, tokenBudget: { tokens: 50000, period: 'day' } } });
  assert.deepEqual(keySettingsFromFlags(flags('--rpm', 'none'), null), { limits: NO_LIMITS });
  assert.deepEqual(
    keySettingsFromFlags(flags('--allow', 'a,b', '--expires', 'never', '--rpm', '60', '--tpm', '100000', '--concurrency', '4', '--budget', '2000000/month', '--cost-budget', '25.50/month'), null),
    { allowedAliases: ['a', 'b'], expiresAt: null, limits: FULL },
  );
});

test('limit flags on update: merged with the current limits, "none" clears one', () => {
  assert.deepEqual(keySettingsFromFlags(flags('--rpm', '120'), FULL), { limits: { ...FULL, requestsPerMinute: 120 } });
  assert.deepEqual(keySettingsFromFlags(flags('--rpm', 'none'), FULL), { limits: { ...FULL, requestsPerMinute: null } });
  assert.deepEqual(keySettingsFromFlags(flags('--tpm', 'none', '--concurrency', 'none'), FULL), {
    limits: { requestsPerMinute: 60, tokensPerMinute: null, concurrentRequests: null, tokenBudget: FULL.tokenBudget, costBudget: FULL.costBudget },
  });
  assert.deepEqual(keySettingsFromFlags(flags('--budget', 'none'), FULL), { limits: { ...FULL, tokenBudget: null } });
  assert.deepEqual(keySettingsFromFlags(flags('--budget', '10/day'), FULL), { limits: { ...FULL, tokenBudget: { tokens: 10, period: 'day' } } });
  assert.deepEqual(keySettingsFromFlags(flags('--concurrency', '1'), NO_LIMITS), { limits: { ...NO_LIMITS, concurrentRequests: 1 } });
  // The current limits are read, never changed (they are frozen records of the store).
  assert.deepEqual(FULL, { requestsPerMinute: 60, tokensPerMinute: 100000, concurrentRequests: 4, tokenBudget: { tokens: 2000000, period: 'month' }, costBudget: { amount: 25.5, period: 'month' } });
});

test('merged limits describe as the store would show them after the update', () => {
  const merged = keySettingsFromFlags(flags('--rpm', 'none', '--budget', '50000/day'), FULL).limits as KeyLimits;
  assert.equal(describeLimits(merged), '100000 tpm, 4 at once, 50000 tokens/day, 25.50/month');
  assert.equal(describeLimits(merged, 'EUR'), '100000 tpm, 4 at once, 50000 tokens/day, 25.50 EUR/month');
  const cleared = keySettingsFromFlags(flags('--rpm', 'none', '--tpm', 'none', '--concurrency', 'none', '--budget', 'none', '--cost-budget', 'none'), FULL).limits as KeyLimits;
  assert.deepEqual(cleared, NO_LIMITS);
  assert.equal(describeLimits(cleared), 'none');
});

test('unreadable numbers and budgets: KeyOptionError naming the flag', () => {
  const cases: [string[], string][] = [
    [['--rpm', 'abc'], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--rpm', ''], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--rpm=-1'], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--rpm', '+5'], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--rpm', ' 5'], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--rpm', 'None'], '--rpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--tpm', '1.5'], '--tpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--tpm', '1e3'], '--tpm must be a whole number from 1 to 1000000000, or "none"'],
    [['--concurrency', '0x10'], '--concurrency must be a whole number from 1 to 1000000000, or "none"'],
    [['--concurrency', '12345678901234'], '--concurrency must be a whole number from 1 to 1000000000, or "none"'],
    [['--budget', '5/week'], '--budget must look like 2000000/month or 50000/day, or be "none"'],
    [['--budget', '5000'], '--budget must look like 2000000/month or 50000/day, or be "none"'],
    [['--budget', '/day'], '--budget must look like 2000000/month or 50000/day, or be "none"'],
    [['--budget', '5 /day'], '--budget must look like 2000000/month or 50000/day, or be "none"'],
    [['--budget', '5/Day'], '--budget must look like 2000000/month or 50000/day, or be "none"'],
    [['--budget=-5/day'], '--budget must look like 2000000/month or 50000/day, or be "none"'],
    [['--cost-budget', '25.50'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
    [['--cost-budget', '25,50/month'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
    [['--cost-budget', '$25/month'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
    [['--cost-budget', '1.1234567/day'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
    [['--cost-budget', '.5/day'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
    [['--cost-budget', '5./day'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
    [['--cost-budget', '5/week'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
    [['--cost-budget', '5/Month'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
    [['--cost-budget', '1e3/day'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
    [['--cost-budget', 'None'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
    [['--cost-budget=-5/day'], '--cost-budget must look like 25.50/month or 5/day (an amount with at most 6 decimals, a slash, day or month), or be "none"'],
  ];
  for (const [args, message] of cases) {
    assert.throws(
      () => keySettingsFromFlags(flags(...args), FULL),
      (error: unknown) => error instanceof KeyOptionError && error.name === 'KeyOptionError' && error.message === message,
      args.join(' '),
    );
  }
});

test('numbers outside the limits are refused by the flag parser, naming the flag', () => {
  assert.throws(() => keySettingsFromFlags(flags('--rpm', '0'), null), { name: 'KeyOptionError', message: '--rpm must be a whole number from 1 to 1000000000, or "none"' });
  assert.throws(() => keySettingsFromFlags(flags('--concurrency', '2000000000'), null), { name: 'KeyOptionError', message: '--concurrency must be a whole number from 1 to 1000000000, or "none"' });
  assert.throws(() => keySettingsFromFlags(flags('--budget', '0/day'), null), { name: 'KeyOptionError', message: '--budget must be a whole number from 1 to 1000000000000, or "none"' });
  assert.throws(() => keySettingsFromFlags(flags('--budget', '1000000000001/month'), null), { name: 'KeyOptionError', message: '--budget must be a whole number from 1 to 1000000000000, or "none"' });
  assert.throws(() => keySettingsFromFlags(flags('--cost-budget', '0/day'), null), { name: 'KeyOptionError', message: '--cost-budget: the amount must be above 0 and at most 1000000; got 0' });
  assert.throws(() => keySettingsFromFlags(flags('--cost-budget', '0.000000/month'), null), { name: 'KeyOptionError', message: '--cost-budget: the amount must be above 0 and at most 1000000; got 0.000000' });
  assert.throws(() => keySettingsFromFlags(flags('--cost-budget', '1000000.000001/month'), null), { name: 'KeyOptionError', message: '--cost-budget: the amount must be above 0 and at most 1000000; got 1000000.000001' });
  // The smallest and largest amounts the flag takes are ones the store takes.
  for (const [text, amount] of [['0.000001/day', 0.000001], ['1000000/month', 1_000_000], ['0025.5/month', 25.5], ['123456.789012/day', 123456.789012]] as const) {
    const limits = keySettingsFromFlags(flags('--cost-budget', text), null);
    assert.deepEqual(parseKeySettings(limits, 0).limits.costBudget, { amount, period: text.endsWith('day') ? 'day' : 'month' }, text);
  }
  const most = keySettingsFromFlags(flags('--budget', '1000000000000/month', '--tpm', '1000000000'), null);
  assert.deepEqual(parseKeySettings(most, 0).limits, { ...NO_LIMITS, tokensPerMinute: 1000000000, tokenBudget: { tokens: 1000000000000, period: 'month' } });
});

test('describeLimits: "none", or the set limits in a fixed order', () => {
  assert.equal(describeLimits(NO_LIMITS), 'none');
  assert.equal(describeLimits(FULL), '60 rpm, 100000 tpm, 4 at once, 2000000 tokens/month, 25.50/month');
  assert.equal(describeLimits(FULL, 'USD'), '60 rpm, 100000 tpm, 4 at once, 2000000 tokens/month, 25.50 USD/month');
  // At least 2 decimals, up to the 6 an amount may have.
  for (const [amount, shown] of [[25.5, '25.50'], [3, '3.00'], [0.125, '0.125'], [0.000001, '0.000001'], [1_000_000, '1000000.00'], [123456.789012, '123456.789012']] as const) {
    assert.equal(describeLimits({ ...NO_LIMITS, costBudget: { amount, period: 'day' } }, 'JPY'), `${shown} JPY/day`);
  }
  assert.equal(describeLimits({ ...NO_LIMITS, requestsPerMinute: 1 }), '1 rpm');
  assert.equal(describeLimits({ ...NO_LIMITS, tokensPerMinute: 5 }), '5 tpm');
  assert.equal(describeLimits({ ...NO_LIMITS, concurrentRequests: 2 }), '2 at once');
  assert.equal(describeLimits({ ...NO_LIMITS, tokenBudget: { tokens: 7, period: 'day' } }), '7 tokens/day');
  assert.equal(describeLimits({ ...FULL, tokensPerMinute: null, concurrentRequests: null }), '60 rpm, 2000000 tokens/month, 25.50/month');
});

test('--guard: repeated NAME=ACTION become the key guard, checked by the key settings; "none" is null', () => {
  assert.deepEqual(keySettingsFromFlags(flags('--guard', 'secrets=block', '--guard', 'email=mask'), null), { guard: { detectors: { secrets: 'block', email: 'mask' } } });
  assert.deepEqual(parseKeySettings(keySettingsFromFlags(flags('--guard', 'secrets=block', '--guard', 'email=mask'), null), 0).guard, { detectors: { secrets: 'block', email: 'mask' } });
  assert.deepEqual(keySettingsFromFlags(flags('--guard', 'none'), null), { guard: null });
  assert.deepEqual(keySettingsFromFlags(flags('--rpm', '5'), null).guard, undefined);
  assert.throws(() => keySettingsFromFlags(flags('--guard', 'none', '--guard', 'email=log'), null), { name: 'KeyOptionError', message: "--guard none removes the key's guard; give it alone" });
  assert.throws(() => keySettingsFromFlags(flags('--guard', 'email'), null), { name: 'KeyOptionError', message: '--guard must look like DETECTOR=ACTION (secrets=block, email=mask), or be "none"; got "email"' });
  assert.throws(() => keySettingsFromFlags(flags('--guard', 'email=log=x'), null), { name: 'KeyOptionError', message: '--guard must look like DETECTOR=ACTION (secrets=block, email=mask), or be "none"; got "email=log=x"' });
  assert.throws(() => keySettingsFromFlags(flags('--guard', 'email=log', '--guard', 'email=mask'), null), { name: 'KeyOptionError', message: '--guard names email twice' });
});

test('--guard: a name or action the key settings refuse is said in the words of the flag', () => {
  const values = flags('--guard', 'emails=block');
  const error = (() => {
    try {
      parseKeySettings(keySettingsFromFlags(values, null), 0);
    } catch (err) {
      return err;
    }
    return assert.fail('accepted');
  })();
  assert.ok(error instanceof InvalidKeySettingError);
  assert.match(inFlagWords(error, values), /^--guard emails: unknown detector; use a group \(secrets, personal\) or one of private_key, /);
  assert.equal(inFlagWords(new InvalidKeySettingError('guard.detectors.jwt', 'must be one of "off", "log", "mask", "block"'), values), '--guard jwt: must be one of "off", "log", "mask", "block"');
});

test('describeGuard: "none", or NAME=ACTION in the order set', () => {
  assert.equal(describeGuard(null), 'none');
  assert.equal(describeGuard({ detectors: {} }), 'none');
  assert.equal(describeGuard({ detectors: { secrets: 'block', email: 'mask' } }), 'secrets=block, email=mask');
});
