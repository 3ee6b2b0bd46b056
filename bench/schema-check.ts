// What a structured-outputs schema costs: checking it against the strict
// subset and compiling it (once per request), then checking an answer against
// it (once per answer). Schemas of 10 and 200 properties mixing strings,
// integers with bounds, enums, nullable fields, arrays, a formatted string and
// a nested object; answers that pass, and answers whose last property fails.
// Then patterns, matched in linear time: common ones, and shapes on which a
// backtracking engine takes exponential time. Best of 5 rounds.
//
//   npm run build && node dist/bench/schema-check.js
//
// Env: BENCH_ITERATIONS (default 20000 for 10 properties; a twentieth for 200).

import { compileSchema } from '../src/schema/compile.ts';
import { checkStrictSchema } from '../src/schema/strict-schema.ts';
import { perCall } from './per-call.ts';
import { schemaFixture, type Schema } from './schema-fixtures.ts';

function fixture(count: number): { schema: Schema; passing: Record<string, unknown>; failing: Record<string, unknown> } {
  const { schema, passing } = schemaFixture(count);
  return { schema, passing, failing: { ...passing, [`field_${count - 1}`]: false } };
}

const iterations = Number(process.env['BENCH_ITERATIONS'] ?? 20_000);
console.log('strict schema check, compile, and answer checks; best of 5 rounds; µs per call (checks per second)');
console.log(`  ${'properties'.padEnd(10)} ${'check schema'.padStart(13)} ${'compile'.padStart(9)} ${'check ok'.padStart(9)} ${'checks/s'.padStart(10)} ${'check fail'.padStart(11)} ${'JSON.parse'.padStart(11)}`);
for (const count of [10, 200]) {
  const n = count > 100 ? Math.max(10, Math.floor(iterations / 20)) : iterations;
  const { schema, passing, failing } = fixture(count);
  const checker = compileSchema(schema);
  if (checker.check(passing) !== null || checker.check(failing) === null) throw new Error('the fixture does not check as meant');
  const text = JSON.stringify(passing);
  const figures = [
    perCall(() => checkStrictSchema(schema), n),
    perCall(() => compileSchema(schema), n),
    perCall(() => checker.check(passing), n),
    perCall(() => checker.check(failing), n),
    // For scale: parsing the answer the check reads.
    perCall(() => JSON.parse(text), n),
  ];
  const [checkSchema, compile, checkOk, checkFail, parse] = figures.map((ns) => ns / 1000) as [number, number, number, number, number];
  console.log(`  ${String(count).padEnd(10)} ${checkSchema.toFixed(2).padStart(13)} ${compile.toFixed(2).padStart(9)} ${checkOk.toFixed(2).padStart(9)} ${Math.round(1e6 / checkOk).toLocaleString('en').padStart(10)} ${checkFail.toFixed(2).padStart(11)} ${parse.toFixed(2).padStart(11)}`);
}

// Patterns: one string property checked against a pattern, µs per check. The
// hostile rows are shapes that make a backtracking engine take exponential time.
const PATTERN_CASES: [string, string, string][] = [
  ['code', '^[A-Z]{3}-\\d{4}$', 'ABC-1234'],
  ['email-like', '^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$', 'ada.lovelace+notes@analytical.example.org'],
  ['word, 1 KB', '\\p{L}+$', 'x'.repeat(1000)],
  ['a*8, 20 a + !', '^a*a*a*a*a*a*a*a*$', `${'a'.repeat(20)}!`],
  ['(a|a)*, 20 a + !', '^(a|a)*$', `${'a'.repeat(20)}!`],
];
console.log('pattern checks; best of 5 rounds; µs per check');
for (const [name, pattern, text] of PATTERN_CASES) {
  const checker = compileSchema({ type: 'object', properties: { s: { type: 'string', pattern } }, required: ['s'], additionalProperties: false });
  const value = { s: text };
  const n = name.includes('!') ? 5 : iterations;
  console.log(`  ${name.padEnd(18)} ${(perCall(() => checker.check(value), n) / 1000).toFixed(2).padStart(12)}`);
}
