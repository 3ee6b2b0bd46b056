// Throughput of the streaming JSON parser against JSON.parse on a ~1 MB chat
// request: many messages with long content strings, some non-ASCII text, escapes.
// The body arrives as bytes, so JSON.parse is charged for decoding them to a string.
//
//   npm run build && node dist/bench/json-parse.js
//   test/node_modules/.bin/tsx bench/json-parse.ts   (tsx comes with npm ci --prefix test)
//
// Env: BENCH_ITERATIONS (default 60), BENCH_BYTES (default 1048576).

import { Buffer } from 'node:buffer';
import { createChatRequestObserver, validateChatRequest } from '../src/chat/request-validator.ts';
import { createJsonParser, parseJson, type JsonObserver } from '../src/json/parser.ts';

const CHUNK_BYTES = 64 * 1024;

/** xorshift32: the same body on every run and every machine. */
function createRandom(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

const ASCII_WORDS = ['the', 'gateway', 'request', 'model', 'token', 'stream', 'context', 'function', 'return', 'value', 'parser', 'answer'];
const OTHER_WORDS = ['während', 'naïve', 'café', 'über', '日本語', 'テキスト', '中文', '内容', '😀', '🚀', 'Ελληνικά', 'русский', 'résumé'];
// Characters JSON.stringify escapes: newlines, quotes, backslashes, tabs, a control character.
const ESCAPED = ['\n', '\n\n', '"', '\\', '\t', '\u0001'];

function buildChatBody(targetBytes: number): Buffer {
  const random = createRandom(0x2f6b1d3);
  const pick = (words: readonly string[]): string => words[Math.floor(random() * words.length)] as string;
  const messages: Record<string, unknown>[] = [{ role: 'system', content: 'You are a helpful assistant. Answer briefly.' }];
  let size = 200;
  while (size < targetBytes - 6000) {
    const words: string[] = [];
    const count = 300 + Math.floor(random() * 900);
    for (let w = 0; w < count; w++) {
      const roll = random();
      words.push(roll < 0.05 ? pick(ESCAPED) : roll < 0.13 ? pick(OTHER_WORDS) : pick(ASCII_WORDS));
    }
    const content = words.join(' ');
    const message: Record<string, unknown> = { role: messages.length % 2 === 1 ? 'user' : 'assistant', content };
    if (messages.length % 9 === 4) message['name'] = `agent_${messages.length}`;
    messages.push(message);
    size += Buffer.byteLength(JSON.stringify(message));
  }
  const body = {
    model: 'gpt-4o-mini',
    messages,
    temperature: 0.7,
    top_p: 1,
    max_tokens: 1024,
    stream: false,
    tools: [{ type: 'function', function: { name: 'lookup', description: 'Look up a record by id', parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } }],
  };
  return Buffer.from(JSON.stringify(body), 'utf8');
}

function parseInChunks(body: Buffer, options?: Parameters<typeof createJsonParser>[0]): unknown {
  const parser = createJsonParser(options);
  for (let start = 0; start < body.length; start += CHUNK_BYTES) parser.feed(body.subarray(start, start + CHUNK_BYTES));
  return parser.end();
}

interface Row {
  name: string;
  run: () => unknown;
}

function measure(row: Row, bytes: number, iterations: number): number {
  const warmup = Math.max(10, Math.floor(iterations / 3));
  for (let k = 0; k < warmup; k++) row.run();
  // Best of several rounds: the least disturbed by GC and other processes.
  let best = Number.POSITIVE_INFINITY;
  const rounds = 5;
  const perRound = Math.max(1, Math.ceil(iterations / rounds));
  for (let round = 0; round < rounds; round++) {
    const started = process.hrtime.bigint();
    for (let k = 0; k < perRound; k++) row.run();
    const elapsed = Number(process.hrtime.bigint() - started) / perRound;
    if (elapsed < best) best = elapsed;
  }
  return (bytes / best) * 1e3; // bytes per ns -> MB/s (1e6 bytes per ms)
}

function main(): void {
  const iterations = Number(process.env['BENCH_ITERATIONS'] ?? 60);
  const body = buildChatBody(Number(process.env['BENCH_BYTES'] ?? 1 << 20));
  const noopObserver: JsonObserver = { key() {}, valueStart() {} };
  const rows: Row[] = [
    { name: "JSON.parse(buf.toString('utf8'))", run: () => JSON.parse(body.toString('utf8')) },
    { name: 'parseJson(buf) whole', run: () => parseJson(body) },
    { name: 'parseJson 64 KiB chunks', run: () => parseInChunks(body) },
    { name: 'parseJson rejectDuplicateKeys + no-op observer', run: () => parseJson(body, { rejectDuplicateKeys: true, observer: noopObserver }) },
    // What the gateway does with a request body: chunks in, the chat observer
    // watching, duplicate keys refused, then the full validation.
    {
      name: 'gateway path: chunks + chat observer + validate',
      run: () => validateChatRequest(parseInChunks(body, { rejectDuplicateKeys: true, observer: createChatRequestObserver() })),
    },
  ];

  const expected: unknown = JSON.parse(body.toString('utf8'));
  // The gateway row validates, which normalises: compare it with validating JSON.parse's value.
  const validated = JSON.stringify(validateChatRequest(expected));
  for (const row of rows) {
    const want = row.name.startsWith('gateway path') ? validated : JSON.stringify(expected);
    if (JSON.stringify(row.run()) !== want) throw new Error(`${row.name} produced a different value`);
  }

  const asciiBytes = body.filter((byte) => byte < 0x80).length;
  console.log(`body: ${body.length} bytes, ${body.length - asciiBytes} non-ASCII bytes, ${iterations} iterations per row, node ${process.version}`);
  const results = rows.map((row) => ({ name: row.name, mbPerSecond: measure(row, body.length, iterations) }));
  const baseline = results[0]?.mbPerSecond ?? 1;
  const width = Math.max(...results.map((result) => result.name.length));
  console.log(`${'case'.padEnd(width)}  ${'MB/s'.padStart(8)}  ${'vs JSON.parse'.padStart(13)}`);
  for (const result of results) {
    console.log(`${result.name.padEnd(width)}  ${result.mbPerSecond.toFixed(0).padStart(8)}  ${(result.mbPerSecond / baseline).toFixed(2).padStart(13)}`);
  }
}

main();
