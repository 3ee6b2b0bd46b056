import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineScript } from '../../src/redis/script.ts';

test('the SHA-1 is the one SCRIPT LOAD returns', () => {
  // Redis documentation's example: SCRIPT LOAD "return 1".
  assert.deepEqual(defineScript('return 1'), { source: 'return 1', sha1: 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db' });
});

test('a script is frozen and its source must not be empty', () => {
  assert.equal(Object.isFrozen(defineScript('return 1')), true);
  assert.throws(() => defineScript(''), TypeError);
});
