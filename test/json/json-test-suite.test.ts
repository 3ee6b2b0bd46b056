// Agreement with JSON.parse on JSONTestSuite (nst/JSONTestSuite, test_parsing):
// y_ files must parse to what JSON.parse gives, n_ files must be rejected by both,
// i_ files may go either way but only as a value or a JsonParseError.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseEveryWay, type Outcome } from './feed-modes.ts';

/** The folder holding package.json, from dist/test/json/ (compiled) or test/json/ (tsx). */
function findRepositoryRoot(): string | undefined {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 10; up++) {
    if (existsSync(join(folder, 'package.json'))) return folder;
    folder = dirname(folder);
  }
  return undefined;
}

const ROOT = findRepositoryRoot();
/** The corpus, kept in the repository with its licence (test/fixtures/json-test-suite/LICENSE). */
const SUITE = ROOT === undefined ? undefined : join(ROOT, 'test', 'fixtures', 'json-test-suite', 'test_parsing');

/** The suite folder; a missing one fails the test rather than skipping it. */
function suiteFolder(): string {
  assert.ok(SUITE !== undefined && existsSync(SUITE), `JSONTestSuite not found at ${SUITE ?? 'test/fixtures/json-test-suite/test_parsing (no package.json above the test)'}`);
  return SUITE;
}

type Reference = { ok: true; value: unknown } | { ok: false };

/**
 * What JSON.parse makes of the file's bytes. The decoder keeps a BOM (ignoreBOM)
 * so JSON.parse sees U+FEFF as it would in a string, and refuses invalid UTF-8,
 * which counts as a rejection since JSON.parse never sees such bytes.
 */
function referenceParse(bytes: Uint8Array): Reference {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { ok: false };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    assert.ok(error instanceof SyntaxError);
    return { ok: false };
  }
}

function parseFile(bytes: Uint8Array): Outcome {
  // Every split for files under 4 KiB, 64 sampled splits for the few larger ones.
  return parseEveryWay(bytes, () => ({}), { everySplitUpTo: 4095, sampledSplits: 64 });
}

function assertRejectedByParser(name: string, outcome: Outcome): void {
  assert.equal(outcome.ok, false, `${name}: parseJson accepted it`);
  if (!outcome.ok) assert.equal(outcome.error.name, 'JsonParseError', `${name}: ${outcome.error.message}`);
}

it('agrees with JSON.parse on every JSONTestSuite parsing file', (t) => {
  const suite = suiteFolder();
  const names = readdirSync(suite).filter((name) => name.endsWith('.json')).sort();
  const counts = { y: 0, n: 0, i: 0, iAccepted: 0 };
  for (const name of names) {
    const bytes = new Uint8Array(readFileSync(join(suite, name)));
    const outcome = parseFile(bytes);
    const reference = referenceParse(bytes);
    if (name.startsWith('y_')) {
      counts.y++;
      assert.ok(reference.ok, `${name}: JSON.parse rejects it`);
      assert.ok(outcome.ok, `${name}: ${outcome.ok ? '' : outcome.error.message}`);
      assert.deepStrictEqual(outcome.value, reference.value, name);
    } else if (name.startsWith('n_')) {
      counts.n++;
      assert.equal(reference.ok, false, `${name}: JSON.parse accepts it`);
      assertRejectedByParser(name, outcome);
    } else if (name.startsWith('i_')) {
      counts.i++;
      if (outcome.ok) counts.iAccepted++;
      else assertRejectedByParser(name, outcome);
    } else assert.fail(`unexpected file ${name}`);
  }
  assert.ok(counts.y > 90 && counts.n > 180, JSON.stringify(counts));
  t.diagnostic(`y_ ${counts.y}, n_ ${counts.n}, i_ ${counts.i} (${counts.iAccepted} accepted)`);
});

it('treats the implementation-defined files as documented', () => {
  const suite = suiteFolder();
  const outcomeOf = (name: string): Outcome => parseFile(new Uint8Array(readFileSync(join(suite, name))));
  // Lone surrogate escapes come out as JSON.parse makes them.
  const lone = outcomeOf('i_string_lone_second_surrogate.json');
  assert.deepStrictEqual(lone.ok && lone.value, ['\udfaa']);
  // Numbers beyond a double are refused (JSON.parse makes them Infinity); underflow and long integers are not.
  for (const name of ['i_number_huge_exp.json', 'i_number_neg_int_huge_exp.json', 'i_number_pos_double_huge_exp.json', 'i_number_real_neg_overflow.json', 'i_number_real_pos_overflow.json']) {
    const outcome = outcomeOf(name);
    assert.deepStrictEqual(!outcome.ok && [outcome.error.code, outcome.error.offset, outcome.error.path], ['number_out_of_range', 1, [0]], name);
  }
  for (const name of ['i_number_double_huge_neg_exp.json', 'i_number_real_underflow.json', 'i_number_too_big_neg_int.json', 'i_number_too_big_pos_int.json', 'i_number_very_big_negative_int.json']) {
    const outcome = outcomeOf(name);
    assert.deepStrictEqual(outcome.ok && outcome.value, JSON.parse(readFileSync(join(suite, name), 'utf8')), name);
  }
  // Raw invalid UTF-8 and a BOM are refused.
  for (const [name, code] of [
    ['i_string_UTF-8_invalid_sequence.json', 'invalid_utf8'],
    ['i_string_UTF8_surrogate_U+D800.json', 'invalid_utf8'],
    ['i_structure_UTF-8_BOM_empty_object.json', 'unexpected_byte'],
    ['i_structure_500_nested_arrays.json', undefined],
  ] as const) {
    const outcome = outcomeOf(name);
    if (code === undefined) assert.ok(outcome.ok, name);
    else assert.equal(!outcome.ok && outcome.error.code, code, name);
  }
});
