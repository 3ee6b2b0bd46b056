// What the fake upstream of bench/gateway.ts answers, as prebuilt bytes: one
// fixed chat.completion, or a fixed sequence of stream chunks (role, content
// pieces, finish), the usage chunk and [DONE]. Shaped like OpenAI's own answers,
// extras included (logprobs, system_fingerprint), so the gateway's
// normalisation does its real work.

import { Buffer } from 'node:buffer';

const WORDS = ['The', ' gateway', ' relays', ' every', ' chunk', ' as', ' soon', ' as', ' it', ' arrives', ' from', ' the', ' upstream', ',', ' without', ' waiting', ' for', ' more', '.'];
/** Content chunks of a streamed answer (plus the role chunk and the finish chunk). */
export const STREAM_CONTENT_CHUNKS = WORDS.length;
const ID = 'chatcmpl-bench0000000000000000000000';
const CREATED = 1_700_000_000;
const MODEL = 'bench-model';
/** The upstream model whose streams the fake upstream holds open (see ./gateway-upstream.ts). */
export const HOLD_MODEL = 'bench-hold';
const USAGE = { prompt_tokens: 12, completion_tokens: STREAM_CONTENT_CHUNKS, total_tokens: 12 + STREAM_CONTENT_CHUNKS };

/** The text both answers carry, so a client can check it arrived whole. */
export const ANSWER_TEXT = WORDS.join('');

export function completionBody(): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: ID,
      object: 'chat.completion',
      created: CREATED,
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: ANSWER_TEXT, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: USAGE,
      system_fingerprint: 'fp_bench',
    }),
  );
}

/** One Buffer per SSE event, in order: role, content pieces, finish, usage, [DONE]. */
export function streamFrames(): Buffer[] {
  const chunk = (choices: unknown[], usage: unknown = null): Buffer =>
    Buffer.from(`data: ${JSON.stringify({ id: ID, object: 'chat.completion.chunk', created: CREATED, model: MODEL, system_fingerprint: 'fp_bench', choices, usage })}\n\n`);
  const frames = [chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }])];
  for (let i = 0; i < STREAM_CONTENT_CHUNKS; i++) {
    frames.push(chunk([{ index: 0, delta: { content: WORDS[i] }, logprobs: null, finish_reason: null }]));
  }
  frames.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]));
  frames.push(chunk([], USAGE));
  frames.push(Buffer.from('data: [DONE]\n\n'));
  return frames;
}
