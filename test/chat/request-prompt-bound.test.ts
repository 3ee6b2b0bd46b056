import assert from 'node:assert/strict';
import { test } from 'node:test';
import { carryPromptBound, measurePrompt, promptBoundOf, promptTokensFor } from '../../src/chat/request-prompt-bound.ts';
import { checkChatRequest, validateChatRequest } from '../../src/chat/request-validator.ts';
import { acceptsKind, jsonKindOf, shapeAt } from '../../src/chat/request-shape.ts';
import { collectStructuralIssues } from '../../src/chat/request-structure.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { body, MODEL, USER, WEATHER_TOOL } from './request-fixtures.ts';

/** A body with every field that counts towards the bound, and some that are dropped. */
const RICH = {
  model: MODEL,
  messages: [
    { role: 'system', content: 'Sei kurz.' },
    { role: 'user', name: 'ana', content: [{ type: 'text', text: 'Was ist das? 漢字' }, { type: 'image_url', image_url: { url: 'https://i.test/a.png', detail: 'low' } }] },
    {
      role: 'assistant',
      content: [{ type: 'refusal', refusal: 'nein' }, { type: 'refusal', refusal: 'non' }],
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Zürich"}', parsed_arguments: { city: 'Zürich' } } }],
      annotations: [],
      audio: null,
    },
    { role: 'tool', tool_call_id: 'call_1', name: 'get_weather', content: '{"temp":21}' },
    { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://i.test/b.png' } }] },
  ],
  tools: [WEATHER_TOOL],
  tool_choice: { type: 'function', function: { name: 'get_weather' } },
  response_format: { type: 'json_object' },
  temperature: 0.2,
};

test('the validator carries the bound it counted while walking, equal to measuring the request it built', () => {
  const request = validateChatRequest(RICH);
  const measured = measurePrompt(request);
  assert.deepEqual(request.promptBound, measured);
  const system = 8 + 6 + 9;
  const user = 8 + 4 + 3 + (4 + 19); // "Was ist das? 漢字": 13 + 6 bytes; the image counts apart
  const assistant = 8 + 9 + (6 + 8 + 11 + 18) + 8; // refusal parts joined: "nein\nnon"
  const tool = 8 + 4 + 6 + 11; // a tool message's name is not forwarded, so not counted
  const lastUser = 8 + 4;
  const tail = JSON.stringify(request.tools).length + 1000 + 53 + 22;
  assert.deepEqual(measured, { tokens: 64 + system + user + assistant + tool + lastUser + tail, imageParts: 2 });
  assert.equal(promptTokensFor(measured, 1600), measured.tokens + 3200);
});

test('the carried bound is not enumerable: not serialised, not compared, not copied', () => {
  const request = validateChatRequest(body());
  assert.deepEqual(request.promptBound, { tokens: 64 + 8 + 4 + 2, imageParts: 0 });
  assert.equal(JSON.stringify(request), JSON.stringify({ model: MODEL, messages: [USER] }));
  assert.deepEqual(request, { model: MODEL, messages: [USER] });
  // A copy may be changed: it measures its own.
  const copy: ChatRequest = { ...request, messages: [...request.messages, { role: 'user', content: 'more' }] };
  assert.equal('promptBound' in copy, false);
  assert.deepEqual(promptBoundOf(copy), { tokens: 64 + (8 + 4 + 2) + (8 + 4 + 4), imageParts: 0 });
  const carried = carryPromptBound({ model: MODEL, messages: [] }, { tokens: 7, imageParts: 1 });
  assert.deepEqual(promptBoundOf(carried), { tokens: 7, imageParts: 1 });
  assert.deepEqual(Object.keys(carried), ['model', 'messages']);
});

/** `value` with every plain object in it wrapped so that each read of a field is counted by path. */
function counted(value: unknown, reads: Map<string, number>, path = ''): unknown {
  if (Array.isArray(value)) return value.map((item, i) => counted(item, reads, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return value;
  const target: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) target[key] = counted(child, reads, path === '' ? key : `${path}.${key}`);
  return new Proxy(target, {
    get(object, key, receiver) {
      if (typeof key === 'string') {
        const at = path === '' ? key : `${path}.${key}`;
        reads.set(at, (reads.get(at) ?? 0) + 1);
      }
      return Reflect.get(object, key, receiver);
    },
  });
}

test('a valid body is walked once: every field of it is read exactly once', () => {
  const reads = new Map<string, number>();
  const request = validateChatRequest(counted(RICH, reads));
  assert.deepEqual(request, validateChatRequest(RICH));
  // A tool's parameters schema is never walked, only measured as part of the tools' JSON for the bound.
  const twice = [...reads].filter(([at, n]) => n !== 1 && !at.startsWith('tools[0].function.parameters.'));
  assert.deepEqual(twice, []);
  // Every field was read: the walk skipped nothing.
  assert.ok(reads.has('messages[1].content[1].image_url.detail'));
  assert.ok(reads.has('messages[2].tool_calls[0].function.parsed_arguments'));
  assert.ok(reads.has('messages[2].annotations'));
  assert.ok(reads.has('tools[0].function.parameters'));
  assert.ok(reads.has('temperature'));
});

test('a structural fault the walk meets only on its way to success is still reported as the structural pass reports it', () => {
  const assistant = (extra: Record<string, unknown>) => body({ messages: [USER, { role: 'assistant', content: 'ok', ...extra }] });
  const call = (fn: Record<string, unknown>) => body({ messages: [USER, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: fn }] }] });
  const fn = (extra: Record<string, unknown>) => body({ tools: [{ type: 'function', function: { name: 'f', ...extra } }] });
  const cases: [string, unknown, string, string][] = [
    ['annotations', assistant({ annotations: 5 }), 'invalid_type', 'messages[1].annotations'],
    ['audio', assistant({ audio: 'x' }), 'invalid_type', 'messages[1].audio'],
    ['reasoning_content', assistant({ reasoning_content: 5 }), 'invalid_type', 'messages[1].reasoning_content'],
    ['parsed (not JSON)', assistant({ parsed: () => 1 }), 'invalid_type', 'messages[1].parsed'],
    ['function_call', assistant({ function_call: 'x' }), 'invalid_type', 'messages[1].function_call'],
    ['refusal', assistant({ refusal: 5 }), 'invalid_type', 'messages[1].refusal'],
    ['tool_calls', assistant({ tool_calls: 'x' }), 'invalid_type', 'messages[1].tool_calls'],
    ['parsed_arguments', call({ name: 'f', arguments: '{}', parsed_arguments: Symbol('x') }), 'invalid_type', 'messages[1].tool_calls[0].function.parsed_arguments'],
    ['arguments', call({ name: 'f', arguments: {} }), 'invalid_type', 'messages[1].tool_calls[0].function.arguments'],
    ['a tool message name (dropped)', body({ messages: [{ role: 'tool', tool_call_id: 'c', name: 5, content: 'x' }] }), 'invalid_type', 'messages[0].name'],
    ['description', fn({ description: 5 }), 'invalid_type', 'tools[0].function.description'],
    ['parameters', fn({ parameters: [] }), 'invalid_type', 'tools[0].function.parameters'],
    ['strict', fn({ strict: 'yes' }), 'invalid_type', 'tools[0].function.strict'],
    ['image detail', body({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://i.test/a.png', detail: 1 } }] }] }), 'invalid_type', 'messages[0].content[0].image_url.detail'],
    ['text part', body({ messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }), 'invalid_type', 'messages[0].content[0].text'],
    ['include_usage null', body({ stream: true, stream_options: { include_usage: null } }), 'invalid_type', 'stream_options.include_usage'],
    ['a stop entry', body({ stop: ['a', 1] }), 'invalid_type', 'stop[1]'],
    ['five stop entries', body({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'array_above_max_length', 'stop'],
    ['257 messages', body({ messages: Array.from({ length: 257 }, () => USER) }), 'array_above_max_length', 'messages'],
    ['65 tools', body({ tools: Array.from({ length: 65 }, (_, i) => ({ type: 'function', function: { name: `t${i}` } })) }), 'array_above_max_length', 'tools'],
    ['model null', body({ model: null }), 'invalid_type', 'model'],
    ['temperature a string', body({ temperature: '1' }), 'invalid_type', 'temperature'],
  ];
  for (const [name, value, code, param] of cases) {
    const check = checkChatRequest(value);
    assert.deepEqual(check, { ok: false, issues: collectStructuralIssues(value) }, name);
    const first = check.ok ? undefined : check.issues[0];
    assert.deepEqual([first?.code, first?.path.join('.').replace(/\.(\d+)/g, '[$1]')], [code, param], name);
  }
});

/** Valid bodies that hold every field of the skeleton (request-shape.ts) at least once. */
const FULL: readonly Record<string, unknown>[] = [
  {
    model: MODEL,
    messages: [
      { role: 'system', content: 'Be brief.', name: 'ops' },
      { role: 'user', name: 'ana', content: [{ type: 'text', text: 'what?' }, { type: 'image_url', image_url: { url: 'https://i.test/a.png', detail: 'low' } }] },
      {
        role: 'assistant',
        name: 'bot',
        content: [{ type: 'text', text: 'ok' }, { type: 'refusal', refusal: 'no' }],
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'get_weather', arguments: '{}', parsed_arguments: {} } }],
        refusal: 'no',
        annotations: [],
        parsed: {},
        audio: {},
        function_call: null,
        reasoning_content: 'because',
      },
      { role: 'tool', tool_call_id: 'c', name: 'get_weather', content: 'sunny' },
    ],
    tools: [{ type: 'function', function: { name: 'get_weather', description: 'd', parameters: { type: 'object' }, strict: true } }],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    response_format: { type: 'json_object' },
    temperature: 1,
    top_p: 1,
    max_completion_tokens: 10,
    stop: ['a'],
    stream: true,
    stream_options: { include_usage: true },
    n: 1,
  },
  { model: MODEL, messages: [USER], tools: [WEATHER_TOOL], tool_choice: 'auto', max_tokens: 5, stop: 'x' },
];

const OF_EVERY_KIND: readonly unknown[] = [{}, [], 'x', 1, true, null, () => 1];

function withValue(root: unknown, path: readonly (string | number)[], value: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let at = copy;
  for (const segment of path.slice(0, -1)) at = at[segment] as Record<string | number, unknown>;
  at[path[path.length - 1] as string | number] = value;
  return copy;
}

function* pathsOf(value: unknown, path: (string | number)[] = []): Generator<(string | number)[]> {
  if (path.length > 0) yield path;
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* pathsOf(value[i], [...path, i]);
  else if (typeof value === 'object' && value !== null) for (const key of Object.keys(value)) yield* pathsOf((value as Record<string, unknown>)[key], [...path, key]);
}

test('at every place the skeleton checks, a value of a kind it refuses, or an unknown field, gets exactly the structural pass\'s issues', () => {
  let tried = 0;
  for (const base of FULL) {
    assert.equal(checkChatRequest(base).ok, true);
    for (const path of pathsOf(base)) {
      const own = shapeAt(path, path.length);
      if (own === undefined) continue;
      for (const wrong of OF_EVERY_KIND) {
        const kind = jsonKindOf(wrong);
        if (kind !== undefined && acceptsKind(own, kind)) continue;
        const mutated = withValue(base, path, wrong);
        const structural = collectStructuralIssues(mutated);
        assert.ok(structural.length > 0, path.join('.'));
        assert.deepEqual(checkChatRequest(mutated), { ok: false, issues: structural }, `${path.join('.')} = ${String(wrong)}`);
        tried++;
      }
      if (own.fields !== undefined) {
        const value = path.reduce<unknown>((v, s) => (v as Record<string | number, unknown>)[s], base);
        if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
        const mutated = withValue(base, [...path, 'zz'], 1);
        assert.deepEqual(checkChatRequest(mutated), { ok: false, issues: collectStructuralIssues(mutated) }, `${path.join('.')}.zz`);
        tried++;
      }
    }
  }
  assert.ok(tried > 150, `only ${tried} mutations`);
});
