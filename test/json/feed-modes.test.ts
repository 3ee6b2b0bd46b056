// The fingerprint that parseEveryWay compares splits by must tell apart every
// pair of outcomes deepStrictEqual tells apart, or a split that parses wrong
// would pass.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { fingerprint } from './feed-modes.ts';

it('differs wherever deepStrictEqual does, on JSON values and error summaries', () => {
  const distinct: unknown[] = [
    0, -0, 1, '0', '', 'a', '"a"', '\ud800', '\udc00', true, false, null, undefined,
    [], [0], [-0], ['0'], [[]], [1, 2], [2, 1], [undefined], [null],
    {}, { a: 0 }, { a: -0 }, { a: '0' }, { b: 0 }, { a: {} }, { a: [] }, { a: undefined }, { '': 0 }, { 'a"': 0 },
    { ok: false, error: { name: 'JsonParseError', message: 'm', code: 'x', offset: 1 }, events: [] },
    { ok: false, error: { name: 'JsonParseError', message: 'm', code: 'x', offset: 2 }, events: [] },
    { ok: false, error: { name: 'JsonParseError', message: 'm', code: 'x', offset: 1, path: [0] }, events: [] },
    { ok: false, error: { name: 'JsonParseError', message: 'm', code: 'x', offset: 1, path: ['0'] }, events: [] },
    { ok: true, value: 1, events: ['value [] number'] },
    { ok: true, value: 1, events: [] },
  ];
  // A sparse array and an own __proto__ key are data the parser can be asked about.
  distinct.push(new Array(1), JSON.parse('{"__proto__":0}'));
  const prints = distinct.map(fingerprint);
  for (let i = 0; i < distinct.length; i++) {
    for (let j = i + 1; j < distinct.length; j++) {
      assert.notEqual(prints[i], prints[j], `${String(prints[i])}: ${i} and ${j}`);
      assert.notDeepStrictEqual(distinct[i], distinct[j]);
    }
  }
});

it('is the same for equal values built apart, and never for other kinds of object', () => {
  assert.equal(fingerprint({ a: [1, { b: 'é' }] }), fingerprint(JSON.parse('{"a":[1,{"b":"é"}]}')));
  // Objects outside JSON (another prototype, symbol keys) are left to deepStrictEqual.
  const nullPrototype = Object.create(null) as object;
  assert.notEqual(fingerprint(nullPrototype), fingerprint(nullPrototype));
  assert.notEqual(fingerprint(new Date(0)), fingerprint(new Date(0)));
  assert.notEqual(fingerprint({ [Symbol.iterator]: 1 }), fingerprint({ [Symbol.iterator]: 1 }));
  assert.notEqual(fingerprint({}), fingerprint(nullPrototype));
});
