// Generated json_schema requests through the Anthropic translation: every one
// is either sent within Anthropic's constraints (the strict fake) or a 400
// unsupported_schema naming the keyword's path in the request; with strict
// true, every schema inside the gateway's strict subset that is not
// recursive and within Anthropic's union limit is sent, and the gateway's own
// check of the original schema is what holds the answer to the bounds left out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatRequest } from '../../src/chat/types.ts';
import { ApiError } from '../../src/errors/api-error.ts';
import { toAnthropicRequest } from '../../src/providers/anthropic-translate.ts';
import { checkStrictSchema } from '../../src/schema/strict-schema.ts';
import { anthropicRequestViolation } from './anthropic-constraints.ts';
import { seededRandom } from '../upstream/seeded-random.ts';

type Json = Record<string, unknown>;

function generator(random: () => number): () => { schema: Json; strict: boolean | undefined } {
  const chance = (p: number): boolean => random() < p;
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const DEFS = ['item', 'node'];

  const leaf = (): Json => {
    const kind = pick(['string', 'integer', 'number', 'boolean', 'enum', 'nullable', 'anyOf', 'ref', 'oddity']);
    switch (kind) {
      case 'string': {
        const s: Json = { type: 'string' };
        if (chance(0.2)) s['format'] = pick(['date-time', 'email', 'uuid', 'ipv4']);
        if (chance(0.15)) s['pattern'] = pick(['^[a-z]+$', '^(?=a)', '\\d{3}']);
        if (chance(0.1)) s['description'] = 'a string';
        return s;
      }
      case 'integer':
      case 'number': {
        const n: Json = { type: kind };
        if (chance(0.3)) n['minimum'] = pick([0, 1, -9007199254740991]);
        if (chance(0.2)) n['maximum'] = pick([10, 9007199254740991]);
        if (chance(0.1)) n['multipleOf'] = 2;
        return n;
      }
      case 'boolean':
        return { type: 'boolean' };
      case 'enum':
        return { type: 'string', enum: ['a', 'b'] };
      case 'nullable':
        return { type: [pick(['string', 'integer']), 'null'] };
      case 'anyOf':
        return { anyOf: [{ type: 'string' }, { type: 'null' }] };
      case 'ref':
        return { $ref: chance(0.15) ? '#' : `#/$defs/${pick(DEFS)}` };
      default:
        return pick<Json>([{ type: 'string', minLength: 1 }, { oneOf: [{ type: 'string' }] }, { type: 'string', format: 'regex' }, { enum: [{ a: 1 }] }]);
    }
  };

  const schemaAt = (depth: number): Json => {
    if (depth > 2 || chance(0.5)) return leaf();
    if (chance(0.4)) {
      const a: Json = { type: 'array', items: schemaAt(depth + 1) };
      if (chance(0.3)) a['minItems'] = pick([0, 1, 2, 5]);
      if (chance(0.2)) a['maxItems'] = 9;
      return a;
    }
    return objectAt(depth + 1);
  };

  const objectAt = (depth: number): Json => {
    const count = Math.floor(random() * (depth === 0 ? 20 : 5));
    const properties: Json = {};
    for (let k = 0; k < count; k++) properties[`p${k}`] = schemaAt(depth);
    const names = Object.keys(properties);
    const o: Json = { type: 'object', properties, required: chance(0.85) ? names : names.filter(() => chance(0.5)) };
    if (chance(0.95)) o['additionalProperties'] = false;
    return o;
  };

  return () => {
    const schema = objectAt(0);
    if (chance(0.6)) schema['$defs'] = { item: objectAt(2), node: chance(0.3) ? objectAt(1) : { type: 'string' } };
    if (chance(0.4)) schema['$schema'] = 'http://json-schema.org/draft-07/schema#';
    return { schema, strict: pick([true, true, false, undefined]) };
  };
}

/** Whether a $ref leads back to a schema holding it: `#` anywhere, or a definition reaching itself. */
function recursive(schema: Json): boolean {
  const text = JSON.stringify(schema);
  if (text.includes('"$ref":"#"')) return true;
  const defs = (schema['$defs'] ?? {}) as Json;
  const refsIn = (value: unknown): string[] => [...JSON.stringify(value).matchAll(/"\$ref":"#\/\$defs\/(\w+)"/g)].map((m) => m[1] as string);
  const reaches = (from: string, goal: string, seen: Set<string>): boolean =>
    refsIn(defs[from]).some((next) => next === goal || (!seen.has(next) && (seen.add(next), reaches(next, goal, seen))));
  return Object.keys(defs).some((name) => reaches(name, name, new Set()));
}

function unions(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + unions(v), 0);
  if (typeof value !== 'object' || value === null) return 0;
  const node = value as Json;
  const own = Array.isArray(node['anyOf']) || (Array.isArray(node['type']) && node['type'].length > 1) ? 1 : 0;
  return own + Object.values(node).reduce((n: number, v) => n + unions(v), 0);
}

test('every generated json_schema is sent within Anthropic\'s constraints, or is a 400 naming the keyword\'s path', () => {
  const seed = Number(process.env['ANTHROPIC_SCHEMA_SEED'] ?? 280028);
  const cases = Number(process.env['ANTHROPIC_SCHEMA_CASES'] ?? 3000);
  const next = generator(seededRandom(seed));
  const tally = { sent: 0, refused: 0, strictSent: 0, boundsLeftOut: 0 };
  const reasons = new Set<string>();
  for (let n = 0; n < cases; n++) {
    const { schema, strict } = next();
    const request: ChatRequest = {
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'g', schema, ...(strict === undefined ? {} : { strict }) } },
    };
    // The validator holds strict schemas to the strict subset before any provider sees them.
    if (strict === true && checkStrictSchema(schema) !== null) continue;
    const context = `seed ${seed}, case ${n}: ${JSON.stringify(schema)} strict ${String(strict)}`;
    try {
      const body = toAnthropicRequest(request);
      assert.equal(anthropicRequestViolation(JSON.parse(JSON.stringify(body))), undefined, `Anthropic would refuse the translation; ${context}`);
      tally.sent++;
      if (strict === true) {
        tally.strictSent++;
        if (/"(minimum|maximum|multipleOf|pattern|maxItems)"/.test(JSON.stringify(schema))) tally.boundsLeftOut++;
      }
    } catch (error) {
      assert.ok(error instanceof ApiError, `not an ApiError: ${String(error)}; ${context}`);
      const { param, code, message } = error.toBody().error;
      assert.equal(code, 'unsupported_schema', context);
      assert.ok(param?.startsWith('response_format.json_schema.schema'), context);
      assert.ok(message.includes(`'${param}'`), `the message names the path; ${context}`);
      if (strict === true) {
        assert.ok(recursive(schema) || unions(schema) > 16, `a strict schema Anthropic can take was refused: ${message}; ${context}`);
      }
      reasons.add(message.replace(/'[^']*'/, "'...'").replace(/\d+/g, 'N'));
      tally.refused++;
    }
  }
  if (process.env["ANTHROPIC_SCHEMA_DEBUG"] !== undefined) console.log(tally, [...reasons]);
  // Every outcome must be reached, or the test proves nothing.
  assert.ok(tally.strictSent >= cases / 40, `seed ${seed}: only ${tally.strictSent} strict schemas sent`);
  assert.ok(tally.boundsLeftOut > 0, `seed ${seed}: no strict schema with bounds left out was sent`);
  assert.ok(tally.sent - tally.strictSent > 0, `seed ${seed}: no non-strict schema sent`);
  assert.ok(tally.refused >= cases / 20, `seed ${seed}: only ${tally.refused} refused`);
  assert.ok(reasons.size >= 6, `seed ${seed}: only ${reasons.size} kinds of refusal: ${[...reasons].join(' | ')}`);
});
