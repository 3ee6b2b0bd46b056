// What a chat request costs between its bytes and its admission: parse with
// the request observer, validate, route through service-auto, reserve. A ~2 kB
// and a ~200 kB body (mixed-script text, one tool, a few image parts). Each
// step is timed alone and the four together, best of 5 rounds.
//
//   npm run build && node dist/bench/validate.js
//
// Env: BENCH_ITERATIONS (default 4000 for the small body; a fiftieth for the large one).

import { Buffer } from 'node:buffer';
import { createChatRequestObserver, validateChatRequest } from '../src/chat/request-validator.ts';
import type { AliasConfig, AutoRule } from '../src/config/config.ts';
import { parseJson } from '../src/json/parser.ts';
import { reserveRequest } from '../src/limits/reservation.ts';
import { resolveAlias } from '../src/routing/alias-routing.ts';
import { perCall } from './per-call.ts';

const PRICES = [{ input: 0.15, cachedInput: 0.075, output: 0.6 }, null];
const WORDS = ['the', 'gateway', 'request', 'token', 'während', '日本語', 'テキスト', '中文', '😀', 'русский', 'résumé', '"quoted"', 'line\nbreak'];

function text(words: number, seed: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[(i * 7 + seed) % WORDS.length] as string);
  return out.join(' ');
}

function body(messages: number, words: number): Buffer {
  const list: Record<string, unknown>[] = [{ role: 'system', content: 'You are a helpful assistant.' }];
  for (let i = 0; i < messages; i++) {
    if (i % 10 === 9) {
      list.push({
        role: 'user',
        content: [
          { type: 'text', text: text(words, i) },
          { type: 'image_url', image_url: { url: `https://images.example/${i}.png`, detail: 'low' } },
        ],
      });
    } else {
      list.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: text(words, i) });
    }
  }
  const value = {
    model: 'service-auto',
    messages: list,
    max_tokens: 1024,
    temperature: 0.3,
    tools: [{ type: 'function', function: { name: 'lookup', description: 'Look up a record', parameters: { type: 'object', properties: { id: { type: 'string' } } } } }],
  };
  return Buffer.from(JSON.stringify(value));
}

const alias = (contextWindow: number | null): AliasConfig => ({
  kind: 'chat',
  targets: [{ provider: 'p', model: 'm', weight: 1, priority: 0, price: null, acceptsDimensions: false, maxInputsPerCall: null }],
  maxOutputTokens: null,
  contextWindow,
  capabilities: [],
  requestFields: null,
  guard: null,
  price: null,
  imageTokens: 2000,
});
const rules: AutoRule[] = [
  { when: { images: true, minPromptTokens: 500_000 }, use: 'service-long', reason: 'prompt_tokens' },
  { when: { tools: true }, use: 'service-tools', reason: 'tools' },
];
const config = {
  aliases: { 'service-chat': alias(128_000), 'service-tools': alias(1_000_000), 'service-long': alias(2_000_000) },
  auto: { default: 'service-chat', rules },
};

const parse = (bytes: Buffer): unknown => parseJson(bytes, { observer: createChatRequestObserver(), rejectDuplicateKeys: true });

const iterations = Number(process.env['BENCH_ITERATIONS'] ?? 4000);
const cases: Array<[string, Buffer]> = [
  ['~2 kB chat', body(6, 40)],
  ['~200 kB chat', body(120, 220)],
];
console.log(`parse + validate + route (service-auto) + reserve, best of 5 rounds; µs per request`);
console.log(`  ${'body'.padEnd(14)} ${'bytes'.padStart(8)} ${'parse'.padStart(9)} ${'validate'.padStart(9)} ${'route'.padStart(9)} ${'reserve'.padStart(9)} ${'all four'.padStart(9)}`);
for (const [name, bytes] of cases) {
  const n = bytes.length > 100_000 ? Math.max(10, Math.floor(iterations / 50)) : iterations;
  const value = parse(bytes);
  const request = validateChatRequest(value);
  const route = resolveAlias(request, config);
  const reserve = () => reserveRequest(request, 1024, route.config, PRICES);
  const figures = [
    perCall(() => parse(bytes), n),
    perCall(() => validateChatRequest(value), n),
    perCall(() => resolveAlias(request, config), n),
    perCall(reserve, n),
    perCall(() => {
      const validated = validateChatRequest(parse(bytes));
      const routed = resolveAlias(validated, config);
      return reserveRequest(validated, 1024, routed.config, PRICES);
    }, n),
  ];
  console.log(`  ${name.padEnd(14)} ${String(bytes.length).padStart(8)} ${figures.map((f) => (f / 1000).toFixed(2).padStart(9)).join(' ')}  -> ${route.alias} (${route.reason})`);
}
