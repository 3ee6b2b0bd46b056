import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { test } from 'node:test';
import type { ChatMessage } from '../../src/chat/types.ts';
import { costNanos } from '../../src/limits/cost.ts';
import { MESSAGE_OVERHEAD, REQUEST_OVERHEAD, reserveEmbeddings, reserveRequest, TOOLS_OVERHEAD, type ReservedRequest } from '../../src/limits/reservation.ts';
import { assertLimiterInput, MAX_CHARGE_NANOS, MAX_REQUEST_TOKENS } from '../../src/limits/limiter.ts';
import { validateChatRequest } from '../../src/chat/request-validator.ts';
import { countReads } from '../support/read-count.ts';

const ALIAS = { imageTokens: 2000 };
const prompt = (request: ReservedRequest, alias = ALIAS): number => reserveRequest(request, 0, alias, []).promptTokens;

test('the overheads are the documented constants', () => {
  assert.deepEqual([REQUEST_OVERHEAD, MESSAGE_OVERHEAD, TOOLS_OVERHEAD], [64, 8, 1000]);
});

test('exact values for small requests: overheads plus the UTF-8 bytes of every string, the role included', () => {
  const hello = reserveRequest({ messages: [{ role: 'user', content: 'Hello tokens' }] }, 100, ALIAS, []);
  // 64 + (8 + "user" 4 + 12) = 88 prompt tokens, plus the 100 of the output maximum.
  assert.deepEqual(hello, { promptTokens: 88, outputTokens: 100, tokens: 188, costNanos: 0 });
  const two = { messages: [{ role: 'system' as const, content: 'Be brief.' }, { role: 'user' as const, content: 'Hello there, how are you?' }] };
  assert.equal(prompt(two), 64 + (8 + 6 + 9) + (8 + 4 + 25));
  // "你好" is 6 bytes, "é" written as e + U+0301 is 3, the emoji 4.
  assert.equal(prompt({ messages: [{ role: 'user', content: '你好' }] }), 64 + 8 + 4 + 6);
  assert.equal(prompt({ messages: [{ role: 'user', content: 'e\u0301' }] }), 64 + 8 + 4 + 3);
  assert.equal(prompt({ messages: [{ role: 'user', content: '🦀' }] }), 64 + 8 + 4 + 4);
  // A lone surrogate goes upstream as U+FFFD at most: 3 bytes.
  assert.equal(prompt({ messages: [{ role: 'user', content: '\ud800' }] }), 64 + 8 + 4 + 3);
  assert.equal(prompt({ messages: [] }), 64);
});

test('300 Chinese characters reserve at least their 900 bytes (the characters/4 estimate said 82)', () => {
  const content = '漢'.repeat(300);
  assert.equal(prompt({ messages: [{ role: 'user', content }] }), 64 + 8 + 4 + 900);
});

test('names, tool calls, tool results and refusals all count', () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: 'Weather in Zürich?', name: 'ana' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Zürich"}' } }],
      refusal: 'no',
    },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
  ];
  const user = 8 + 4 + 19 + 3; // "Zürich" has a two-byte ü
  const assistant = 8 + 9 + (6 + 8 + 11 + 18) + 2;
  const tool = 8 + 4 + 6 + 11;
  assert.equal(prompt({ messages }), 64 + user + assistant + tool);
});

test('text parts count their bytes (and their type); an image part counts imageTokens, never its URL', () => {
  const url = `https://images.example/${'x'.repeat(5000)}.png`;
  const request: ReservedRequest = {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url, detail: 'high' } },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ],
  };
  assert.equal(prompt(request), 64 + 8 + 4 + (4 + 13) + 2 * 2000);
  assert.equal(prompt(request, { imageTokens: 1600 }), 64 + 8 + 4 + (4 + 13) + 2 * 1600);
  assert.equal(prompt(request, { imageTokens: 1 }), 64 + 8 + 4 + (4 + 13) + 2);
});

test('tools: the bytes of their JSON plus the tool-use overhead; tool_choice and response_format their JSON', () => {
  const tools = [
    {
      type: 'function' as const,
      function: { name: 'get_weather', description: 'Das Wetter für eine Stadt', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    },
  ];
  const toolsJson = Buffer.byteLength(JSON.stringify(tools));
  assert.equal(toolsJson, 189);
  const base = 64 + 8 + 4 + 2;
  const messages: ChatMessage[] = [{ role: 'user', content: 'hi' }];
  assert.equal(prompt({ messages, tools }), base + 189 + 1000);
  assert.equal(prompt({ messages, tools, tool_choice: 'auto' }), base + 189 + 1000 + 6);
  assert.equal(prompt({ messages, tools, tool_choice: { type: 'function', function: { name: 'get_weather' } } }), base + 189 + 1000 + 53);
  assert.equal(prompt({ messages, response_format: { type: 'json_object' } }), base + 22);
  // The validator drops an empty tools array; should one arrive, it adds nothing.
  assert.equal(prompt({ messages, tools: [] }), base);
});

test('cost: the prompt bound at the highest input price and the output maximum at the highest output price', () => {
  const request = { messages: [{ role: 'user' as const, content: 'Hello tokens' }] }; // 88 prompt tokens
  const cheap = { input: 0.15, cachedInput: 0.075, output: 0.6 };
  const dear = { input: 1, cachedInput: 0.1, output: 0.5 };
  const r = reserveRequest(request, 1000, ALIAS, [cheap, null, dear]);
  // 88 at 1.00 = 88_000 nanos; 1000 at 0.60 = 600_000 nanos.
  assert.equal(r.costNanos, 688_000);
  assert.equal(r.costNanos, costNanos(88, 1) + costNanos(1000, 0.6));
  assert.equal(reserveRequest(request, 1000, ALIAS, [cheap]).costNanos, costNanos(88, 0.15) + 600_000);
  assert.equal(reserveRequest(request, 1000, ALIAS, []).costNanos, 0);
  assert.equal(reserveRequest(request, 1000, ALIAS, [null, null]).costNanos, 0);
  assert.equal(reserveRequest(request, 1000, ALIAS, [{ input: 0, cachedInput: 0, output: 0 }]).costNanos, 0);
  // Beyond what the limiter accounts (MAX_CHARGE_NANOS) the cost stands at that bound.
  const max = { input: 10_000, cachedInput: 10_000, output: 10_000 };
  assert.equal(reserveRequest(request, 900_719_925, ALIAS, [max]).costNanos, MAX_CHARGE_NANOS);
});

test('an output maximum that is not a non-negative integer is a programming error', () => {
  for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    assert.throws(() => reserveRequest({ messages: [] }, bad, ALIAS, []), RangeError, String(bad));
  }
});

// --- property: for any text, the bound is at least the text's UTF-8 bytes ---

/** Mulberry32: a small seeded generator, so a failure names the seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Code point ranges: ASCII, Latin-1, combining marks, Cyrillic, CJK, Hangul, emoji, lone surrogates, the top of Unicode. */
const RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x20, 0x7e],
  [0xa0, 0xff],
  [0x300, 0x36f],
  [0x400, 0x4ff],
  [0x4e00, 0x9fff],
  [0xac00, 0xd7a3],
  [0x1f300, 0x1faff],
  [0xd800, 0xdfff],
  [0x10000, 0x10ffff],
];

function randomText(next: () => number, maxLength: number): string {
  const length = Math.floor(next() * maxLength);
  let text = '';
  for (let i = 0; i < length; i++) {
    const [lo, hi] = RANGES[Math.floor(next() * RANGES.length)] as readonly [number, number];
    const code = lo + Math.floor(next() * (hi - lo + 1));
    text += code >= 0xd800 && code <= 0xdfff ? String.fromCharCode(code) : String.fromCodePoint(code);
  }
  return text;
}

/** UTF-8 bytes by another route than Buffer.byteLength: what the upstream's byte-level tokenizer starts from. */
const encoder = new TextEncoder();
const utf8 = (text: string): number => encoder.encode(text).length;

test('property: across 2000 generated requests, the bound is at least the UTF-8 bytes of every string in them', () => {
  for (let seed = 1; seed <= 2000; seed++) {
    const next = random(seed);
    const text = () => randomText(next, 40);
    const strings: string[] = [];
    const keep = (s: string): string => {
      strings.push(s);
      return s;
    };
    const messages: ChatMessage[] = [
      { role: keep('system'), content: keep(text()) } as ChatMessage,
      { role: keep('user'), name: keep(text() || 'x'), content: [{ type: keep('text'), text: keep(text()) }, { type: keep('text'), text: keep(text()) }] } as ChatMessage,
      {
        role: keep('assistant'),
        content: null,
        refusal: keep(text()),
        tool_calls: [{ id: keep(text() || 'c'), type: keep('function'), function: { name: keep(text() || 'f'), arguments: keep(text()) } }],
      } as ChatMessage,
      { role: keep('tool'), tool_call_id: keep(text() || 'c'), content: keep(text()) } as ChatMessage,
    ];
    const bytes = strings.reduce((sum, s) => sum + utf8(s), 0);
    const bound = prompt({ messages });
    assert.equal(bound, REQUEST_OVERHEAD + messages.length * MESSAGE_OVERHEAD + bytes, `seed ${seed}`);
    // Never below what a characters/4 estimate gave, and for non-Latin text well above it.
    const chars = strings.reduce((sum, s) => sum + s.length, 0);
    assert.ok(bound >= Math.ceil(chars / 4), `seed ${seed}`);
  }
});

test('a crafted request cannot reserve past what the limiter accounts: tokens and cost are clamped, never a RangeError', () => {
  const image = { type: 'image_url' as const, image_url: { url: 'https://example.test/a.png' } };
  const parts = Array.from({ length: 20_000 }, () => image);
  const request = { messages: [{ role: 'user' as const, content: parts }] } as unknown as ReservedRequest;
  const dear = { input: 10_000, cachedInput: 10_000, output: 10_000 };
  const r = reserveRequest(request, 1_000_000, { imageTokens: 1_000_000 }, [dear]);
  assert.equal(r.tokens, MAX_REQUEST_TOKENS);
  assert.equal(r.promptTokens, MAX_REQUEST_TOKENS - 1_000_000);
  assert.equal(r.costNanos, MAX_CHARGE_NANOS);
  assertLimiterInput({ tokens: r.tokens, costNanos: r.costNanos }, 0, 'reservation');
});

test('a validated request is reserved from the bound it carries, without reading its messages again', () => {
  const request = validateChatRequest({ model: 'm', messages: [{ role: 'user', content: 'Hello tokens' }] });
  const reads = countReads(request, 'messages');
  assert.deepEqual(reserveRequest(request, 100, ALIAS, []), { promptTokens: 88, outputTokens: 100, tokens: 188, costNanos: 0 });
  assert.equal(reads.count, 0);
});

test('an embeddings reservation: the prompt bound at the highest input price, no output', () => {
  const prices = [{ input: 0.02, cachedInput: 0.02, output: 0 }, null, { input: 0.13, cachedInput: 0.13, output: 5 }];
  assert.deepEqual(reserveEmbeddings(1000, prices), { promptTokens: 1000, outputTokens: 0, tokens: 1000, costNanos: costNanos(1000, 0.13) });
  assert.deepEqual(reserveEmbeddings(10, []), { promptTokens: 10, outputTokens: 0, tokens: 10, costNanos: 0 });
  assert.deepEqual(reserveEmbeddings(10, [null]), { promptTokens: 10, outputTokens: 0, tokens: 10, costNanos: 0 });
  assert.equal(reserveEmbeddings(0, prices).tokens, 0);
  // Clamped to what the limiter accounts.
  const huge = reserveEmbeddings(Number.MAX_SAFE_INTEGER, [{ input: 1e6, cachedInput: 1e6, output: 0 }]);
  assert.deepEqual([huge.promptTokens, huge.costNanos], [MAX_REQUEST_TOKENS, MAX_CHARGE_NANOS]);
  assert.doesNotThrow(() => assertLimiterInput({ tokens: huge.tokens, costNanos: huge.costNanos }, 0, 'reservation'));
  for (const bad of [-1, 1.5, Number.NaN]) assert.throws(() => reserveEmbeddings(bad, prices), RangeError);
});
