// Cost of a request's reservation (src/limits/reservation.ts) beside the
// validation every request already pays: a short chat, a 50-message
// conversation with tools, and a ~1 MB body of mixed-script text. The
// reservation is computed once per request from a key with limits.
//
//   npm run build && node dist/bench/reservation.js
//
// Env: BENCH_ITERATIONS (default 2000).

import { Buffer } from 'node:buffer';
import { validateChatRequest } from '../src/chat/request-validator.ts';
import { reserveRequest } from '../src/limits/reservation.ts';
import { perCall } from './per-call.ts';

const PRICES = [{ input: 0.15, cachedInput: 0.075, output: 0.6 }, null];
const WORDS = ['the', 'gateway', 'request', 'token', 'während', '日本語', 'テキスト', '中文', '😀', 'русский', 'résumé'];

function text(words: number, seed: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[(i * 7 + seed) % WORDS.length] as string);
  return out.join(' ');
}

function body(messages: number, words: number, tools: boolean): unknown {
  const list: Record<string, unknown>[] = [{ role: 'system', content: 'You are a helpful assistant.' }];
  for (let i = 0; i < messages; i++) list.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: text(words, i) });
  return {
    model: 'service-chat',
    messages: list,
    max_tokens: 1024,
    ...(tools ? { tools: [{ type: 'function', function: { name: 'lookup', description: 'Look up a record', parameters: { type: 'object', properties: { id: { type: 'string' } } } } }] } : {}),
  };
}

const iterations = Number(process.env['BENCH_ITERATIONS'] ?? 2000);
const cases: Array<[string, unknown]> = [
  ['short chat (2 messages)', body(1, 20, false)],
  ['conversation (50 messages, tools)', body(50, 200, true)],
  ['~1 MB mixed-script body', body(200, 600, false)],
];
console.log(`reserveRequest beside validateChatRequest, best of 5 rounds of ${iterations}`);
for (const [name, value] of cases) {
  const bytes = Buffer.byteLength(JSON.stringify(value));
  const request = validateChatRequest(value);
  const n = bytes > 100_000 ? Math.max(10, Math.floor(iterations / 50)) : iterations;
  const reserve = perCall(() => reserveRequest(request, 1024, { imageTokens: 2000 }, PRICES), n);
  const validate = perCall(() => validateChatRequest(value), n);
  console.log(`  ${name.padEnd(36)} ${String(bytes).padStart(8)} bytes  reserve ${(reserve / 1000).toFixed(1).padStart(8)} µs  validate ${(validate / 1000).toFixed(1).padStart(8)} µs`);
}
