// Operator patterns at config time: what is refused and why, and how literals
// and regexes are found by the scanner.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileCustomPattern, createGuardScanner, type CompiledPattern, type Finding } from '../../src/guard/guard-types.ts';

function compiled(pattern: Parameters<typeof compileCustomPattern>[0]): CompiledPattern {
  const result = compileCustomPattern(pattern);
  assert.ok(!('problem' in result), JSON.stringify(result));
  return result;
}

describe('compileCustomPattern', () => {
  it('refuses with the reason', () => {
    assert.deepEqual(compileCustomPattern({ name: 'Bad Name', literals: ['x'] }), { problem: 'name must be 1 to 64 characters of a-z, 0-9, "_" and "-", starting with a letter or digit' });
    assert.deepEqual(compileCustomPattern({ name: 'both', literals: ['x'], regex: 'x' }), { problem: 'give exactly one of "literals" or "regex"' });
    assert.deepEqual(compileCustomPattern({ name: 'none' }), { problem: 'give exactly one of "literals" or "regex"' });
    assert.deepEqual(compileCustomPattern({ name: 'empty', literals: [] }), { problem: 'literals must be a list of 1 to 1000 strings' });
    assert.deepEqual(compileCustomPattern({ name: 'blank', literals: ['ok', '  '] }), { problem: 'literals[1] must be a string of 1 to 256 characters, not only spaces' });
    assert.deepEqual(compileCustomPattern({ name: 'backref', regex: '(a)\\1' }), { problem: 'regex cannot be run in linear time: a backreference at offset 3; rewrite it without that feature' });
    assert.deepEqual(compileCustomPattern({ name: 'empty-match', regex: 'a*' }), { problem: 'regex matches the empty string: it must match at least one character' });
    const invalid = compileCustomPattern({ name: 'invalid', regex: '(' });
    assert.ok('problem' in invalid && invalid.problem.startsWith('regex is not a valid regular expression: '), JSON.stringify(invalid));
  });

  it('names its findings custom:<name>', () => {
    assert.equal(compiled({ name: 'project-x', literals: ['Project X'] }).detector, 'custom:project-x');
  });
});

describe('operator patterns in the scanner', () => {
  const scanner = createGuardScanner({
    detectors: new Set(['email']),
    patterns: [compiled({ name: 'project-x', literals: ['Project X', 'X-Ray'] }), compiled({ name: 'ticket', regex: 'INC-[0-9]{6}' })],
  });
  const found = (text: string): string[] => {
    const out: Finding[] = [];
    scanner.scan(text, out);
    return out.map((f) => `${f.detector}:${text.slice(f.start, f.end)}`);
  };

  it('literals case-insensitively, not inside a longer word', () => {
    assert.deepEqual(found('PROJECT X and an x-ray, not Project Xylophone'), ['custom:project-x:PROJECT X', 'custom:project-x:x-ray']);
  });

  it('regexes with their spans, beside the built-in detectors, in order of start', () => {
    assert.deepEqual(found('see INC-123456 from ops@example.com, INC-1234567 (no \\b: its first six digits)'), ['custom:ticket:INC-123456', 'email:ops@example.com', 'custom:ticket:INC-123456']);
  });

  it('many literals in one pass: the longest at a position wins, across patterns; the steps do not grow with the number of literals', () => {
    const words = Array.from({ length: 1000 }, (_, i) => `codename${i}`);
    const many = createGuardScanner({
      detectors: new Set(),
      patterns: [compiled({ name: 'names', literals: words }), compiled({ name: 'long', literals: ['codename12 alpha'] })],
    });
    const text = 'see CODENAME12 alpha, codename999 and codename1000x. ';
    const out: Finding[] = [];
    many.scan(text, out);
    assert.deepEqual(out.map((f) => `${f.detector}:${text.slice(f.start, f.end)}`), ['custom:long:CODENAME12 alpha', 'custom:names:codename999']);
    const one = createGuardScanner({ detectors: new Set(), patterns: [compiled({ name: 'names', literals: ['codename1'] })] });
    const prose = text.repeat(2000);
    one.scan(prose, []);
    many.scan(prose, []);
    // The trie walk reads each candidate position's characters once, whichever literal they could begin.
    assert.ok(many.lastSteps <= 1.5 * one.lastSteps, `${many.lastSteps} steps with 1001 literals, ${one.lastSteps} with one`);
  });
});
