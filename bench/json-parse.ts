// Throughput of the streaming JSON parser against JSON.parse on a ~1 MB chat
// request: many messages with long content strings, some non-ASCII text, escapes.
// The body arrives as bytes, so JSON.parse is charged for decoding them to a string.
//
//   npm run build && node dist/bench/json-parse.js
//   test/node_modules/.bin/tsx bench/json-parse.ts   (tsx comes with npm ci --prefix test)
//
// Env: BENCH_ITERATIONS (default 60), BENCH_BYTES (default 1048576),
// BENCH_BASELINE (default none): another build's compiled parser
// (e.g. /tmp/old/dist/src/json/parser.js); each parser row is then measured
// for both builds in interleaved rounds, and the ratio printed, so a loaded
// machine slows both alike:
//
//   BENCH_BASELINE=/tmp/old/dist/src/json/parser.js node dist/bench/json-parse.js

import { Buffer } from 'node:buffer';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createChatRequestObserver, validateChatRequest } from '../src/chat/request-validator.ts';
import * as current from '../src/json/parser.ts';
import type { JsonObserver, JsonParserOptions } from '../src/json/parser.ts';
import { createRandom } from './random.ts';

/** What a row needs of a parser build. */
interface ParserBuild {
  createJsonParser: typeof current.createJsonParser;
  parseJson: typeof current.parseJson;
}

const CHUNK_BYTES = 64 * 1024;

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

function parseInChunks(build: ParserBuild, body: Buffer, options?: JsonParserOptions): unknown {
  const parser = build.createJsonParser(options);
  for (let start = 0; start < body.length; start += CHUNK_BYTES) parser.feed(body.subarray(start, start + CHUNK_BYTES));
  return parser.end();
}

interface Row {
  name: string;
  /** The row's work with a parser build; JSON.parse's row ignores it. */
  run: (build: ParserBuild) => unknown;
  /** Measured for the baseline build too (when there is one). */
  compared: boolean;
}

/**
 * MB/s of each of `runs`, measured in turns: each round times every run once,
 * in an order that alternates, so what disturbs one round (GC, other
 * processes) falls on all of them. Best of the rounds for each.
 */
function measure(runs: readonly (() => unknown)[], bytes: number, iterations: number): number[] {
  const warmup = Math.max(10, Math.floor(iterations / 3));
  for (const run of runs) for (let k = 0; k < warmup; k++) run();
  const best = runs.map(() => Number.POSITIVE_INFINITY);
  const rounds = runs.length === 1 ? 5 : 10;
  const perRound = Math.max(1, Math.ceil(iterations / 5));
  for (let round = 0; round < rounds; round++) {
    for (let n = 0; n < runs.length; n++) {
      const index = round % 2 === 0 ? n : runs.length - 1 - n;
      const run = runs[index] as () => unknown;
      const started = process.hrtime.bigint();
      for (let k = 0; k < perRound; k++) run();
      const elapsed = Number(process.hrtime.bigint() - started) / perRound;
      if (elapsed < (best[index] as number)) best[index] = elapsed;
    }
  }
  return best.map((nanoseconds) => (bytes / nanoseconds) * 1e3); // bytes per ns -> MB/s (1e6 bytes per ms)
}

/** BENCH_BASELINE: the compiled parser module of another build, or none. */
async function loadBaseline(): Promise<ParserBuild | undefined> {
  const raw = process.env['BENCH_BASELINE'];
  if (raw === undefined || raw === '') return undefined;
  const file = resolve(raw);
  if (!existsSync(file)) {
    throw new Error(`BENCH_BASELINE=${raw}: ${file} does not exist; give the compiled parser of another build, e.g. /tmp/old/dist/src/json/parser.js`);
  }
  const build = (await import(pathToFileURL(file).href)) as Partial<ParserBuild>;
  if (typeof build.createJsonParser !== 'function' || typeof build.parseJson !== 'function') {
    throw new Error(`BENCH_BASELINE=${raw}: that module exports no createJsonParser and parseJson; give another build's dist/src/json/parser.js`);
  }
  return build as ParserBuild;
}

async function main(): Promise<void> {
  const iterations = Number(process.env['BENCH_ITERATIONS'] ?? 60);
  const body = buildChatBody(Number(process.env['BENCH_BYTES'] ?? 1 << 20));
  const baseline = await loadBaseline();
  const noopObserver: JsonObserver = { key() {}, valueStart() {} };
  const rows: Row[] = [
    { name: "JSON.parse(buf.toString('utf8'))", run: () => JSON.parse(body.toString('utf8')), compared: false },
    { name: 'parseJson(buf) whole', run: (build) => build.parseJson(body), compared: true },
    { name: 'parseJson 64 KiB chunks', run: (build) => parseInChunks(build, body), compared: true },
    { name: 'parseJson rejectDuplicateKeys + no-op observer', run: (build) => build.parseJson(body, { rejectDuplicateKeys: true, observer: noopObserver }), compared: true },
    // What the gateway does with a request body: chunks in, the chat observer
    // watching, duplicate keys refused, then the full validation.
    {
      name: 'gateway path: chunks + chat observer + validate',
      run: (build) => validateChatRequest(parseInChunks(build, body, { rejectDuplicateKeys: true, observer: createChatRequestObserver() })),
      compared: true,
    },
  ];

  const expected: unknown = JSON.parse(body.toString('utf8'));
  // The gateway row validates, which normalises: compare it with validating JSON.parse's value.
  const validated = JSON.stringify(validateChatRequest(expected));
  for (const row of rows) {
    const want = row.name.startsWith('gateway path') ? validated : JSON.stringify(expected);
    if (JSON.stringify(row.run(current)) !== want) throw new Error(`${row.name} produced a different value`);
    if (baseline !== undefined && row.compared && JSON.stringify(row.run(baseline)) !== want) {
      throw new Error(`${row.name} produced a different value with the baseline build`);
    }
  }

  const asciiBytes = body.filter((byte) => byte < 0x80).length;
  console.log(`body: ${body.length} bytes, ${body.length - asciiBytes} non-ASCII bytes, ${iterations} iterations per row, node ${process.version}`);
  const results = rows.map((row) => {
    const runs = [() => row.run(current)];
    if (baseline !== undefined && row.compared) runs.push(() => row.run(baseline));
    const [mbPerSecond, baselineMbPerSecond] = measure(runs, body.length, iterations);
    return { name: row.name, mbPerSecond: mbPerSecond as number, baselineMbPerSecond };
  });
  const jsonParse = results[0]?.mbPerSecond ?? 1;
  const width = Math.max(...results.map((result) => result.name.length));
  const baselineHeader = baseline === undefined ? '' : `  ${'baseline MB/s'.padStart(13)}  ${'vs baseline'.padStart(11)}`;
  console.log(`${'case'.padEnd(width)}  ${'MB/s'.padStart(8)}  ${'vs JSON.parse'.padStart(13)}${baselineHeader}`);
  for (const result of results) {
    const line = `${result.name.padEnd(width)}  ${result.mbPerSecond.toFixed(0).padStart(8)}  ${(result.mbPerSecond / jsonParse).toFixed(2).padStart(13)}`;
    const versus = result.baselineMbPerSecond === undefined
      ? ''
      : `  ${result.baselineMbPerSecond.toFixed(0).padStart(13)}  ${(result.mbPerSecond / result.baselineMbPerSecond).toFixed(2).padStart(11)}`;
    console.log(line + versus);
  }
}

await main();
