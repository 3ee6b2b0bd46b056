// The pure work one relayed stream costs the gateway, step by step, on the
// gateway benchmark's own upstream answer (./gateway-upstream-answers.ts: a
// role chunk, the content pieces, the finish and usage chunks, [DONE]): UTF-8
// decoding, the event-stream parser, JSON.parse per event, normalisation, the
// chunk relay, and JSON.stringify plus SSE framing per event out. No sockets,
// no promises: what is left of a stream's CPU in bench/gateway.js beyond these
// is the I/O, the async steps and the garbage they make. The last step is the
// whole exchange loop (../src/upstream/upstream-stream.ts and the pump) over an
// in-memory transport, one frame per read: the async steps without the sockets,
// with the promises made per read counted by an async hook.
//
//   npm run build && node dist/bench/stream-path.js
//
// Env: BENCH_ITERATIONS (default 20000) streams per step.

import { createHook } from 'node:async_hooks';
import { Buffer } from 'node:buffer';
import { normalizeChunk } from '../src/chat/completion-response.ts';
import { ChunkRelay } from '../src/chat/stream-relay.ts';
import type { ChatCompletionChunk } from '../src/chat/types.ts';
import { pumpEventStream, type EventSink, type PumpControl } from '../src/gateway/event-stream-pump.ts';
import { createOpenAICompatibleProvider } from '../src/providers/openai-compatible.ts';
import { createEventStreamParser, type EventStreamEvent } from '../src/sse/event-stream-parser.ts';
import { ConnectObservation, type UpstreamBody, type UpstreamTransport } from '../src/upstream/transport.ts';
import { openExchangeStream } from '../src/upstream/upstream-stream.ts';
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

const frames = streamFrames();
const DONE_READ: Promise<undefined> = Promise.resolve(undefined);

/** Hands over the benchmark answer one frame per read, as a socket might. */
const transport: UpstreamTransport = {
  name: 'memory',
  send() {
    let at = 0;
    const body: UpstreamBody = {
      read: () => (at < frames.length ? Promise.resolve(frames[at++] as Uint8Array) : DONE_READ),
      cancel: () => undefined,
    };
    const headers = { get: (name: string) => (name === 'content-type' ? 'text/event-stream' : null) };
    return { response: Promise.resolve({ status: 200, headers, body }), connect: ConnectObservation.Unobserved, abort: () => undefined };
  },
};
const provider = createOpenAICompatibleProvider({ baseUrl: 'http://upstream.bench/v1', transport });
if (provider.kind !== 'http') throw new Error('an HTTP provider');
const RESOLVED: Promise<void> = Promise.resolve();
const sink: EventSink = { data: () => RESOLVED, end: () => undefined };
const control: PumpControl = { open: () => sink, endedForShutdown: () => false, clientGone: () => false, onStreamError: () => undefined };
const request = { model: 'm', messages: [{ role: 'user' as const, content: 'Hi' }], max_tokens: 16 };
const signal = new AbortController().signal;

async function loop(): Promise<void> {
  const stream = openExchangeStream(provider as Extract<typeof provider, { kind: 'http' }>, { request, requestId: 'req_bench', signal });
  await pumpEventStream(stream, { alias: 'service-bench', includeUsage: true }, control);
}

let promises = 0;
const hook = createHook({
  init(_id, type) {
    if (type === 'PROMISE') promises++;
  },
});
await loop();
hook.enable();
await loop();
hook.disable();
console.log('');
console.log(`Exchange loop over an in-memory transport: ${frames.length} reads per stream, ${(promises / frames.length).toFixed(1)} promises made per read (the whole stream: ${promises})`);
for (let i = 0; i < Math.min(2000, ITERATIONS); i++) await loop();
const started = performance.now();
for (let i = 0; i < ITERATIONS; i++) await loop();
console.log(`| ${'exchange loop + relay + pump'.padEnd(34)} | ${(((performance.now() - started) * 1000) / ITERATIONS).toFixed(2).padStart(8)} |`);
