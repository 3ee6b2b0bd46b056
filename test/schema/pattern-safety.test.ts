// nestedRepetitionAt: a group repeated while holding a repetition of varying
// count is found (the shape of most exponential-backtracking patterns); fixed
// counts, optional groups, classes and escapes are not mistaken for one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nestedRepetitionAt } from '../../src/schema/pattern-safety.ts';

describe('nestedRepetitionAt', () => {
  it('finds a repeated group holding a repetition, at the group', () => {
    const found: [string, number][] = [
      ['^(a+)+$', 1], ['(a*)*', 0], ['x(?:ab+c){2,}', 1], ['((ab)*c)*', 0], ['(a{1,3})+', 0], ['^(\\w+\\s?)*$', 1],
      ['(?:(a|b+))*', 0], ['a(b(c+)d)+', 1], ['([a-z]+)*', 0],
    ];
    for (const [pattern, at] of found) assert.equal(nestedRepetitionAt(pattern), at, pattern);
  });

  it('passes patterns without nested repetition', () => {
    const safe = [
      '^[A-Z]{3}$', '(\\d{3}-)+', '(?:\\.\\d+)?', '(a+)?', '(a+){3}', '\\(a+\\)+', '[(a+)]+', '[\\]+(]+', 'a+b*c{2,}', '(ab)+', '(a|b)*', '\\p{L}+',
      '^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26])-02-29|\\d{4}-(?:0[1-9]|1[0-2]))T(?:[01]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z))$',
    ];
    for (const pattern of safe) assert.equal(nestedRepetitionAt(pattern), -1, pattern);
  });
});
