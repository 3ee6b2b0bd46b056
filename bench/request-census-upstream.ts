// The fake OpenAI-compatible upstream of bench/request-census.ts, in its own
// process so that nothing it makes is counted. The requested model says what
// to answer: `census-json` a complete chat.completion, `census-N` with
// `"stream":true` a stream of N content chunks, `census-hold` an answer held
// until the parent sends `release` (JSON: before the headers; a stream: after
// its first chunk). A stream's next event is written only when the parent
// says its client received the previous one (`next`, or after
// PACE_FALLBACK_MS), so that the serving process reads every event on its own,
// as from a model that is generating: counts per chunk are then counts per
// upstream read, the same in every run.

import { Buffer } from 'node:buffer';
import http from 'node:http';
import { completionBody } from './gateway-upstream-answers.ts';
import { serveForBench } from './gateway-server-child.ts';

const ID = 'chatcmpl-census00000000000000000000';
const CREATED = 1_700_000_000;
const MODEL_FIELD = /"model":"census-(json|hold|\d+)"/;
/** A serving process that sends nothing on for an event (none does for a chat chunk) does not stall the stream. */
const PACE_FALLBACK_MS = 100;

function frame(choices: unknown[], usage: unknown = null): Buffer {
  return Buffer.from(`data: ${JSON.stringify({ id: ID, object: 'chat.completion.chunk', created: CREATED, model: 'census', choices, usage })}\n\n`);
}

/** `count` content chunks (the last one finishes), the usage chunk and [DONE]. */
function streamFrames(count: number): Buffer[] {
  const frames: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const last = i === count - 1;
    frames.push(frame([{ index: 0, delta: i === 0 ? { role: 'assistant', content: 'w' } : { content: ' w' }, logprobs: null, finish_reason: last ? 'stop' : null }]));
  }
  frames.push(frame([], { prompt_tokens: 12, completion_tokens: count, total_tokens: 12 + count }));
  frames.push(Buffer.from('data: [DONE]\n\n'));
  return frames;
}

const STREAM_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
/** Held answers close their connection, so that no upstream connection they
 * opened outlives them: the heap after them is the heap before them. */
const CLOSE = { connection: 'close' };
const completion = completionBody();
const framesByCount = new Map<number, Buffer[]>();
/** Held answers: each finishes its response when called. */
const held = new Set<() => void>();

/** Called by the parent's `next`: the stream being paced may write its next event. */
let advance: (() => void) | null = null;

function nextAsked(): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(go, PACE_FALLBACK_MS);
    function go(): void {
      clearTimeout(timer);
      advance = null;
      resolve();
    }
    advance = go;
  });
}

async function writeFrames(res: http.ServerResponse, frames: readonly Buffer[], from: number, paced: boolean): Promise<void> {
  for (let i = from; i < frames.length; i++) {
    if (res.destroyed) return;
    res.write(frames[i]);
    if (paced) await nextAsked();
  }
  res.end();
}

function answer(body: Buffer, res: http.ServerResponse): void {
  const model = MODEL_FIELD.exec(body.toString('utf8'))?.[1];
  const stream = body.includes('"stream":true');
  if (model === undefined) {
    res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"model must be census-json, census-hold or census-N"}}');
    return;
  }
  if (!stream) {
    const send = (): void => {
      res.writeHead(200, { ...(model === 'hold' ? CLOSE : {}), 'content-type': 'application/json', 'content-length': String(completion.length) }).end(completion);
    };
    if (model === 'hold') held.add(send);
    else send();
    return;
  }
  const count = model === 'hold' || model === 'json' ? 1 : Number(model);
  let frames = framesByCount.get(count);
  if (frames === undefined) framesByCount.set(count, (frames = streamFrames(count)));
  res.writeHead(200, model === 'hold' ? { ...CLOSE, ...STREAM_HEADERS } : STREAM_HEADERS);
  if (model === 'hold') {
    res.write(frames[0]);
    held.add(() => void writeFrames(res, frames, 1, false));
    return;
  }
  void writeFrames(res, frames, 0, true);
}

const server = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => answer(Buffer.concat(parts), res));
});
serveForBench(server, 'bench/request-census-upstream');

process.on('message', (message: unknown) => {
  const m = message as { type?: unknown; id?: unknown };
  if (m.type === 'next') advance?.();
  if (m.type === 'held') process.send?.({ type: 'held', id: m.id, count: held.size });
  if (m.type !== 'release') return;
  const all = [...held];
  held.clear();
  for (const finish of all) finish();
  process.send?.({ type: 'release', id: m.id });
});
