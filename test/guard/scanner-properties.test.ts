// Properties of the scanner over generated text: values planted at random
// offsets among filler (prose, code, hex, numbers) are each found with their
// exact span and nothing else is; and the work of a scan is linear: adversarial
// 1 MB texts stay within a fixed number of steps per character.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileCustomPattern, createGuardScanner, DETECTOR_NAMES, type CompiledPattern, type Finding } from '../../src/guard/guard-types.ts';
import { plantable, randomString, seeded } from './guard-fixtures.ts';

const FILLER = [
  'the', 'gateway', 'forwards', 'request', 'model', 'function', 'return', 'value;', 'const', 'x', '=', '{', '}', '(', ')', '42', '2024',
  'S3', 'EKS', 'v1.2.3', '10.0.0.1', '1700000000', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'a.b', 'id:', '-', '#',
  '550e8400-e29b-41d4-a716-446655440000', 'foo_bar', 'Bar.baz()', '"json":', '[1,', '2]', '\n', '\t',
];

function pattern(p: Parameters<typeof compileCustomPattern>[0]): CompiledPattern {
  const compiled = compileCustomPattern(p);
  assert.ok(!('problem' in compiled), JSON.stringify(compiled));
  return compiled;
}

describe('planted values', () => {
  const patterns = [pattern({ name: 'ticket', regex: 'INC-[0-9]{6}' }), pattern({ name: 'project-x', literals: ['Project X', 'Bluebird'] })];
  const scanner = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns });

  for (let seed = 1; seed <= 200; seed++) {
    it(`seed ${seed}: each planted value is found whole, and nothing else`, () => {
      const random = seeded(seed);
      const candidates = [
        ...plantable(random),
        { detector: 'custom:ticket', value: `INC-${randomString(random, '0123456789', 6)}` },
        { detector: 'custom:project-x', value: random() < 0.5 ? 'project x' : 'BLUEBIRD' },
      ];
      let text = '';
      const expected: Finding[] = [];
      const plants = 1 + Math.floor(random() * 6);
      for (let p = 0; p < plants; p++) {
        const words = Math.floor(random() * 30);
        for (let w = 0; w < words; w++) text += `${FILLER[Math.floor(random() * FILLER.length)]} `;
        const plant = candidates[Math.floor(random() * candidates.length)] as { detector: string; value: string };
        expected.push({ detector: plant.detector, start: text.length, end: text.length + plant.value.length });
        // A number right after a phone number, past a space, reads as more of its digits: a word follows each plant.
        text += `${plant.value} ok `;
      }
      for (let w = Math.floor(random() * 20); w > 0; w--) text += `${FILLER[Math.floor(random() * FILLER.length)]} `;
      const out: Finding[] = [];
      scanner.scan(text, out);
      assert.deepEqual(out.map((f) => `${f.detector}@${f.start}:${text.slice(f.start, f.end)}`), expected.map((f) => `${f.detector}@${f.start}:${text.slice(f.start, f.end)}`));
    });
  }
});

describe('linear time', () => {
  const MB = 1 << 20;
  /** Steps a scan may take per character: the pass, plus every detector's bounded window where text triggers it. */
  const STEPS_PER_CHAR = 24;
  const patterns = [pattern({ name: 'greedy', regex: '(a|a)*b' }), pattern({ name: 'ticket', regex: 'INC-[0-9]{6}' }), pattern({ name: 'lit', literals: ['aaaa', 'eyJ'] })];
  const scanner = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: [] });
  const withPatterns = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns });

  const adversarial: Record<string, string> = {
    'JWT heads without a dot': 'eyJ-'.repeat(MB / 4),
    'JWT heads with dots': 'eyJhbGci.eyJ.'.repeat(MB / 13),
    'private key headers': '-----BEGIN PRIVATE KEY-----\n'.repeat(MB / 28),
    'at signs in a long local part': `${'a'.repeat(63)}@`.repeat(MB / 64),
    'grouped digits': '4111 '.repeat(MB / 5),
    'digit groups of no issuer': '1234 5678 1234 '.repeat(MB / 15),
    'full-width grouped digits': '４１１１ '.repeat(MB / 5),
    'phone numbers in context': 'tel 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 '.repeat(MB / 36),
    'national phone numbers, each after its context word': 'phone 020 7946 0958 '.repeat(MB / 20),
    'assignments': 'password=password='.repeat(MB / 18),
    'plus signs and digits': '+1 '.repeat(MB / 3),
    'AKIA ids and base64': `AKIAIOSFODNN7EXAMPLE ${'A'.repeat(39)} `.repeat(MB / 61),
    'token prefixes': 'sk-ant-api03-sk-proj-ghp_xoxb-1234567890-'.repeat(MB / 42),
    'one long word': 'a'.repeat(MB),
  };

  for (const [name, text] of Object.entries(adversarial)) {
    it(`${name}: a 1 MB text within ${STEPS_PER_CHAR} steps per character`, () => {
      scanner.scan(text, []);
      assert.ok(scanner.lastSteps <= STEPS_PER_CHAR * text.length, `${scanner.lastSteps} steps for ${text.length} characters`);
      assert.ok(scanner.lastSteps >= text.length);
    });
  }

  it('operator regexes: (a|a)*b over a megabyte of a is one linear search', () => {
    const text = 'a'.repeat(MB);
    withPatterns.scan(text, []);
    const program = (patterns[0] as CompiledPattern).regex?.ops.length as number;
    assert.ok(withPatterns.lastSteps <= (STEPS_PER_CHAR + 4 * program) * text.length, `${withPatterns.lastSteps}`);
  });

  it('4 MB of digit groups ("1234 5678 1234 ...") costs at most three times what prose does per character (it was eleven): no group is read again for each later one', () => {
    const digits = '1234 5678 1234 '.repeat((4 * MB) / 15);
    scanner.scan(digits, []);
    const perDigitChar = scanner.lastSteps / digits.length;
    const prose = 'the gateway forwards each request to a model '.repeat((4 * MB) / 45);
    scanner.scan(prose, []);
    const perProseChar = scanner.lastSteps / prose.length;
    assert.ok(perDigitChar <= 3 * perProseChar, `${perDigitChar.toFixed(2)} steps per character of digits, ${perProseChar.toFixed(2)} of prose`);
  });

  it('steps grow in proportion to the text: 1 MB costs about twice 512 kB', () => {
    const half = 'eyJ-4111 +1 a@b. password=x'.repeat(MB / 54);
    scanner.scan(half, []);
    const small = scanner.lastSteps;
    scanner.scan(half + half, []);
    assert.ok(scanner.lastSteps <= 2 * small + 64, `${small} then ${scanner.lastSteps}`);
  });
});
