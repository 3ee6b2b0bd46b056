// The pure work one relayed stream costs the gateway, step by step, on the
// gateway benchmark's own upstream answer (./gateway-upstream-answers.ts: a
// role chunk, the content pieces, the finish and usage chunks, [DONE]): UTF-8
// decoding, the event-stream parser, JSON.parse per event, normalisation, the
// chunk relay, and JSON.stringify plus SSE framing per event out. No sockets,
// no promises: what is left of a stream's CPU in bench/gateway.js beyond these
// is the I/O, the async steps and the garbage they make.
//
//   npm run build && node dist/bench/stream-path.js
//
// Env: BENCH_ITERATIONS (default 20000) streams per step.

import { Buffer } from 'node:buffer';
import { normalizeChunk } from '../src/chat/completion-response.ts';
import { ChunkRelay } from '../src/chat/stream-relay.ts';
import type { ChatCompletionChunk } from '../src/chat/types.ts';
import { createEventStreamParser, type EventStreamEvent } from '../src/sse/event-stream-parser.ts';
import { frame } from '../src/sse/sse-writer.ts';
import { streamFrames } from './gateway-upstream-answers.ts';

const raw = process.env['BENCH_ITERATIONS'];
const ITERATIONS = raw === undefined || raw === '' ? 20_000 : Number(raw);
if (!Number.isSafeInteger(ITERATIONS) || ITERATIONS < 1 || ITERATIONS > 10_000_000) {
  throw new Error('BENCH_ITERATIONS must be an integer from 1 to 10000000');
}

const bytes = Buffer.concat(streamFrames());

/** Runs `step` ITERATIONS times after a warm-up; prints µs per stream. */
function measure(name: string, step: () => unknown): void {
  for (let i = 0; i < Math.min(2000, ITERATIONS); i++) step();
  const started = performance.now();
  for (let i = 0; i < ITERATIONS; i++) step();
  const perStream = ((performance.now() - started) * 1000) / ITERATIONS;
  console.log(`| ${name.padEnd(34)} | ${perStream.toFixed(2).padStart(8)} |`);
}

function parseEvents(text: string): EventStreamEvent[] {
  const events: EventStreamEvent[] = [];
  const parser = createEventStreamParser({ onEvent: (event) => void events.push(event) });
  parser.feed(text);
  parser.end();
  return events;
}

const text = new TextDecoder('utf-8').decode(bytes);
const datas = parseEvents(text).map((e) => e.data).filter((d) => d !== '[DONE]');
const parsed: unknown[] = datas.map((d) => JSON.parse(d) as unknown);
const chunks: ChatCompletionChunk[] = parsed.map((p) => normalizeChunk(p));
const relay = (): ChatCompletionChunk[] => {
  const r = new ChunkRelay({ alias: 'service-bench', includeUsage: true });
  const out: ChatCompletionChunk[] = [];
  for (const c of chunks) out.push(...r.push(c));
  out.push(...r.end());
  return out;
};
const relayed = relay();

console.log(`# Stream path: ${datas.length} events, ${bytes.length} bytes per stream; Node ${process.version}; ${ITERATIONS} streams per step`);
console.log('');
console.log('| step                               | µs/stream |');
console.log('|:-----------------------------------|---------:|');
measure('UTF-8 decode (TextDecoder, stream)', () => {
  const decoder = new TextDecoder('utf-8');
  return decoder.decode(bytes, { stream: true }) + decoder.decode();
});
measure('event-stream parser', () => parseEvents(text));
measure(`JSON.parse x${datas.length}`, () => {
  for (const d of datas) JSON.parse(d);
});
measure('normalizeChunk', () => {
  for (const p of parsed) normalizeChunk(p);
});
measure('chunk relay', relay);
measure('JSON.stringify + SSE frame', () => {
  let out = '';
  for (const c of relayed) out += frame('data: ', JSON.stringify(c));
  return out;
});
