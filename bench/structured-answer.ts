// What holding an answer to a strict json_schema costs
// (../src/chat/structured-answer.ts), for answers of 10 and 200 properties:
// a whole completion (its content parsed by the gateway's parser, then
// checked), and a stream of the same content in deltas of 4 characters, as a
// model's tokens come, checked chunk by chunk to the finish. The chunk relay
// over the same stream is the yardstick: every streamed chunk goes through it
// anyway. Per chunk is the stream's time over its chunks. Best of 5 rounds.
// Requests without a schema do none of this (no check, no wrapper).
//
//   npm run build && node dist/bench/structured-answer.js
//
// Env: BENCH_ITERATIONS (default 2000 for 10 properties; a tenth for 200).

import { checkCompletionAnswer, StreamedAnswerCheck } from '../src/chat/structured-answer.ts';
import { ChunkRelay } from '../src/chat/stream-relay.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../src/chat/types.ts';
import { compileSchema } from '../src/schema/compile.ts';
import { schemaFixture, type Schema } from './schema-fixtures.ts';

function fixture(count: number): { schema: Schema; content: string } {
  const { schema, passing } = schemaFixture(count);
  return { schema, content: JSON.stringify(passing, null, 1) };
}

const DELTA_CHARS = 4;

function chunk(delta: ChatCompletionChunk['choices'][number]['delta'], finish: 'stop' | null): ChatCompletionChunk {
  return { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'bench-model', choices: [{ index: 0, delta, finish_reason: finish }] };
}

function streamOf(content: string): ChatCompletionChunk[] {
  const chunks = [chunk({ role: 'assistant', content: '' }, null)];
  for (let at = 0; at < content.length; at += DELTA_CHARS) chunks.push(chunk({ content: content.slice(at, at + DELTA_CHARS) }, null));
  chunks.push(chunk({}, 'stop'));
  return chunks;
}

function completionOf(content: string): ChatCompletion {
  return {
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1,
    model: 'bench-model',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop' }],
  };
}

/** Best of 5 rounds, µs per call. */
function perCall(run: () => unknown, iterations: number): number {
  for (let k = 0; k < Math.max(10, iterations / 10); k++) run();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let k = 0; k < iterations; k++) run();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / iterations / 1000);
  }
  return best;
}

const MAX_BYTES = 16 * 1024 * 1024;
const iterations = Number(process.env['BENCH_ITERATIONS'] ?? 2000);
console.log(`# Structured answers: checked against a strict json_schema; Node ${process.version}; best of 5 rounds; µs`);
console.log('');
console.log('| properties | answer bytes | chunks | whole: parse + check | JSON.parse + check | stream: check | per chunk | stream: chunk relay | per chunk |');
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const count of [10, 200]) {
  const n = count > 100 ? Math.max(10, Math.floor(iterations / 10)) : iterations;
  const { schema, content } = fixture(count);
  const checker = compileSchema(schema);
  const completion = completionOf(content);
  const chunks = streamOf(content);
  if (checkCompletionAnswer(checker, completion, MAX_BYTES) !== null) throw new Error('the fixture does not pass its schema');
  const whole = perCall(() => checkCompletionAnswer(checker, completion, MAX_BYTES), n);
  const builtin = perCall(() => checker.check(JSON.parse(content)), n);
  const streamed = perCall(() => {
    const check = new StreamedAnswerCheck(checker, MAX_BYTES);
    let verdict = null;
    for (let i = 0; i < chunks.length; i++) verdict = check.push(chunks[i] as ChatCompletionChunk);
    if (verdict !== null) throw new Error('the stream does not pass its schema');
  }, n);
  const relayed = perCall(() => {
    const relay = new ChunkRelay({ alias: 'service-bench', includeUsage: false });
    const out: ChatCompletionChunk[] = [];
    for (let i = 0; i < chunks.length; i++) relay.pushInto(chunks[i] as ChatCompletionChunk, out);
    return out;
  }, n);
  const cells = [count, Buffer.byteLength(content), chunks.length, whole.toFixed(1), builtin.toFixed(1), streamed.toFixed(1), (streamed / chunks.length).toFixed(3), relayed.toFixed(1), (relayed / chunks.length).toFixed(3)];
  console.log(`| ${cells.join(' | ')} |`);
}
