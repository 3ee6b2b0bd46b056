// Properties of the answer guard over generated answers: values planted among
// filler, the request's placeholders and look-alikes, cut into random pieces
// (seeded): the pieces' outputs joined are exactly the whole text's output,
// with the same findings in the same order; JSON stays JSON.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GuardAction } from '../../src/guard/guard-policy.ts';
import { DETECTOR_NAMES } from '../../src/guard/guard-types.ts';
import { described, guardFor, stream, type RequestMasks } from './answer-rig.ts';
import { plantable, randomString, seeded } from './guard-fixtures.ts';

const FILLER = [
  'the', 'gateway', 'forwards', 'request', 'model', 'function', 'return', 'value;', 'const', 'x', '=', '{', '}', '(', ')', '42', '2024',
  'S3', 'EKS', 'v1.2.3', '10.0.0.1', '1700000000', 'a.b', 'id:', '-', '#', '"json":', '[1,', '2]', '[', ']', '[CARD', '_NUMBER_', '\n', '\t',
  'call', 'phone:', 'token', 'password', 'caf\u00e9', '\u{1F600}', 'INC-12', '@',
];

const MASKS: RequestMasks = {
  '[CARD_NUMBER_1]': ['card_number', '4111 1111 1111 1111'],
  '[EMAIL_1]': ['email', 'alice@example.org'],
  '[CUSTOM_TICKET_1]': ['custom:ticket', 'INC-000001'],
};
const LOOK_ALIKES = ['[CARD_NUMBER_1]', '[EMAIL_1]', '[CUSTOM_TICKET_1]', '[CARD_NUMBER_9]', '[NOT_ONE]', '[EMAIL_1', 'EMAIL_1]'];
const ACTIONS: readonly GuardAction[] = ['off', 'log', 'mask', 'mask', 'mask', 'block'];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)] as T;
}

/** A policy: each detector an action, block rare enough that most answers run to their end. */
function randomPolicy(random: () => number): Record<string, GuardAction> {
  const detectors: Record<string, GuardAction> = {};
  for (const name of [...DETECTOR_NAMES, 'custom:ticket']) detectors[name] = random() < 0.1 ? 'block' : pick(random, ACTIONS.slice(0, 5));
  return detectors;
}

/** Values that become recognisable within `holdBack` characters (a longer one may go out in part before it is). */
function plants(random: () => number, holdBack: number): string[] {
  return [...plantable(random).map((p) => p.value), `INC-${randomString(random, '0123456789', 6)}`].filter((value) => value.length < holdBack - 8);
}

function randomText(random: () => number, holdBack: number): string {
  const values = plants(random, holdBack);
  let text = '';
  for (let p = 1 + Math.floor(random() * 8); p > 0; p--) {
    for (let w = Math.floor(random() * 40); w > 0; w--) text += `${pick(random, FILLER)} `;
    text += random() < 0.3 ? pick(random, LOOK_ALIKES) : pick(random, values);
    text += random() < 0.5 ? ' ok ' : ' ';
  }
  return text;
}

/** `text` in pieces of random sizes up to `most`. */
function pieces(random: () => number, text: string, most: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length;) {
    const size = 1 + Math.floor(random() * most);
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

describe('random answers in random pieces give what the whole answer gives', () => {
  for (let seed = 1; seed <= 100; seed++) {
    const holdBackChars = seed % 2 === 0 ? 64 : 256;
    it(`seed ${seed}, hold-back ${holdBackChars}`, () => {
      const random = seeded(seed);
      const detectors = randomPolicy(random);
      const settings = { holdBackChars, scan: random() < 0.9, restore: random() < 0.8 };
      const text = randomText(random, holdBackChars);
      const whole = guardFor(detectors, settings, MASKS);
      const expected = whole.whole('a', 'text', text);
      const findings = described(whole);
      // One character per piece is the costliest (a scan per character): every fourth seed.
      for (const most of seed % 4 === 1 ? [1, 7, 90, 600] : [3, 7, 90, 600]) {
        const guard = guardFor(detectors, settings, MASKS);
        const { outputs, blocked } = stream(guard, pieces(random, text, most));
        assert.equal(outputs.join(''), expected.text, `pieces up to ${most}`);
        assert.equal(blocked, expected.blocked);
        assert.deepEqual(described(guard), findings, `pieces up to ${most}`);
        // With nothing to do the pieces go out as they came.
        const guarded = settings.scan || settings.restore;
        for (const output of guarded ? outputs : []) {
          const last = output.charCodeAt(output.length - 1);
          assert.ok(!(last >= 0xd800 && last <= 0xdbff), 'a surrogate pair split between outputs');
        }
      }
    });
  }
});

describe('random tool-call arguments stay JSON', () => {
  for (let seed = 1; seed <= 80; seed++) {
    it(`seed ${seed}`, () => {
      const random = seeded(1000 + seed);
      const detectors = randomPolicy(random);
      for (const name of Object.keys(detectors)) if (detectors[name] === 'block') detectors[name] = 'mask';
      const values = plants(random, 256);
      const args: Record<string, unknown> = {};
      for (let k = Math.floor(random() * 8); k >= 0; k--) {
        const roll = random();
        args[`k${k}`] = roll < 0.2 ? 5555555555554444 : roll < 0.3 ? 42.5 : roll < 0.5 ? pick(random, LOOK_ALIKES)
          : `${pick(random, FILLER)} "${pick(random, values)}" \\ ${pick(random, LOOK_ALIKES)} ${pick(random, FILLER)}`;
      }
      const text = JSON.stringify(args);
      const whole = guardFor(detectors, { holdBackChars: 256 }, MASKS);
      const expected = whole.whole('a', 'json', text).text;
      assert.equal(typeof JSON.parse(expected), 'object', expected);
      const findings = described(whole);
      for (const most of [1, 13, 300]) {
        const guard = guardFor(detectors, { holdBackChars: 256 }, MASKS);
        assert.equal(stream(guard, pieces(random, text, most), 'json').outputs.join(''), expected);
        assert.deepEqual(described(guard), findings);
      }
    });
  }
});
