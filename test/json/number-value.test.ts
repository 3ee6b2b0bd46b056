import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { it } from 'node:test';
import { numberFromBytes } from '../../src/json/number-value.ts';

function valueOf(text: string): number {
  // Padding on both sides checks that only bytes[start, end) are read.
  const bytes = Buffer.from(`[${text}]`, 'latin1');
  return numberFromBytes(bytes, 1, bytes.length - 1);
}

function assertSameAsJsonParse(text: string): void {
  const expected = JSON.parse(text) as number;
  assert.ok(Object.is(valueOf(text), expected), `${text}: got ${valueOf(text)}, JSON.parse gives ${expected}`);
}

it('converts edge cases as JSON.parse does', () => {
  for (const text of [
    '0', '-0', '0.0', '-0.0', '0e0', '-0E+5', '1', '-1', '9', '10', '123', '999999999999999', '1000000000000000',
    '9007199254740991', '9007199254740993', '18446744073709551616', '0.1', '0.2', '0.3', '1.5', '-2.25', '3.141592653589793',
    '1e22', '1e23', '1e-22', '1e-23', '123456789012345e22', '123456789012345e-22', '1234567890123456e-22',
    '2.2250738585072011e-308', '2.2250738585072014e-308', '4.9e-324', '2.4e-324', '2.5e-324', '1e-400',
    '1.7976931348623157e308', '1.7976931348623158e308', '1.7976931348623159e308', '1e400', '-1e400',
    '0.000000000000000000000000000001', '1E2', '1e+2', '1e-2', '12.34e1', '12.34E-1', '0.1e1', '100e-2',
    '1e0000000000000000000000000000001', '0.00000000000000000000000000000000000000000000001e46',
  ]) {
    assertSameAsJsonParse(text);
  }
});

it('agrees with JSON.parse on random numbers of every shape', () => {
  let seed = 0x9e3779b9;
  const random = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 0x1_0000_0000;
  };
  const digits = (count: number): string => {
    let text = '';
    for (let d = 0; d < count; d++) text += String(Math.floor(random() * 10));
    return text;
  };
  for (let round = 0; round < 20_000; round++) {
    const integer = String(1 + Math.floor(random() * 9)) + digits(Math.floor(random() * 20));
    let text = (random() < 0.5 ? '-' : '') + (random() < 0.1 ? '0' : integer);
    if (random() < 0.6) text += `.${digits(1 + Math.floor(random() * 20))}`;
    if (random() < 0.5) text += `${random() < 0.5 ? 'e' : 'E'}${['', '+', '-'][Math.floor(random() * 3)]}${Math.floor(random() * 40)}`;
    assertSameAsJsonParse(text);
  }
  for (let round = 0; round < 2_000; round++) {
    const value = (random() - 0.5) * 10 ** Math.floor(random() * 40 - 20);
    assertSameAsJsonParse(JSON.stringify(value));
  }
});
