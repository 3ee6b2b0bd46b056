// The egress guard on chat answers through the gateway, whole and streamed:
// an AWS key in the answer masked, a card blocked (the answer cut before it,
// finish_reason content_filter, nothing of it on the wire), values split
// over SSE chunks and inside tool-call arguments; the request's masked card
// restored where the answer names its placeholder (or left as it is when
// restoration is off); with neither setting on, the answer's bytes are those
// of a gateway without a guard. Every sink is searched for the planted values.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServerResponse } from 'node:http';
import { createGatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { eventually } from '../support/eventually.ts';
import { postChat, sseData, type RawResponse } from './harness.ts';
import { startGuardRig, type GuardRig } from './guard-rig.ts';

const AWS_KEY = 'AKIAQ3EGRTWXZ7PLMN4K';
const CARD = '4111111111111111';
const OTHER_CARD = '5555555555554444';
const PLANTED = [AWS_KEY, CARD, OTHER_CARD];

/** What the fake upstream answers next: a whole completion's message, or SSE chunk payloads. */
let script: { message: Record<string, unknown>; finish?: string } | { chunks: unknown[] } = { message: { role: 'assistant', content: 'ok' } };

const USAGE = { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 };

function answerWith(res: ServerResponse): void {
  if ('message' in script) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion', created: 1700000000, model: 'm', choices: [{ index: 0, message: script.message, finish_reason: script.finish ?? 'stop' }], usage: USAGE }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const chunk of script.chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  res.end('data: [DONE]\n\n');
}

/** One upstream chunk of choice 0. */
function delta(d: Record<string, unknown>, finish: string | null = null): unknown {
  return { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1700000000, model: 'm', choices: [{ index: 0, delta: d, finish_reason: finish }] };
}

/** `text` as content chunks of `size` characters, the first with the role, then the finish and the usage chunk. */
function contentChunks(text: string, size: number, finish = 'stop'): unknown[] {
  const chunks: unknown[] = [];
  for (let at = 0; at < text.length; at += size) chunks.push(delta(at === 0 ? { role: 'assistant', content: text.slice(at, at + size) } : { content: text.slice(at, at + size) }));
  chunks.push(delta({}, finish));
  chunks.push({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1700000000, model: 'm', choices: [], usage: USAGE });
  return chunks;
}

const MASKING = { card_number: 'mask', secrets: 'mask' };

let rig: GuardRig;
const metrics = createGatewayMetrics({ targets: () => [], isKnownAlias: () => true, stateBackendUp: () => 1 });
/** Each answer's bytes by request id. */
const bodies = new Map<string, string>();

before(async () => {
  rig = await startGuardRig({
    aliases: {
      // Top level: AWS keys masked, cards blocked; answers scanned and restored.
      'service-fake': { provider: 'fake', model: 'upstream-model-1' },
      'masking': { provider: 'fake', model: 'upstream-model-1', guard: { detectors: MASKING, answers: { scan: true, restore: true, holdBackChars: 64 } } },
      'no-restore': { provider: 'fake', model: 'upstream-model-1', guard: { detectors: MASKING, answers: { scan: true, restore: false, holdBackChars: 64 } } },
      'restore-only': { provider: 'fake', model: 'upstream-model-1', guard: { detectors: MASKING, answers: { scan: false, restore: true } } },
      'neither': { provider: 'fake', model: 'upstream-model-1', guard: { detectors: MASKING, answers: { scan: false, restore: false } } },
    },
    guard: { detectors: { secrets: 'mask', card_number: 'block', email: 'log' }, answers: { scan: true, restore: true, holdBackChars: 64 } },
  }, { metrics });
  rig.upstream.handle = (_req, res) => answerWith(res);
});
after(() => rig.close());

async function chat(model: string, content: string, requestId: string, extra: Record<string, unknown> = {}): Promise<RawResponse> {
  const res = await postChat(rig.gw, { model, messages: [{ role: 'user', content }], ...extra }, { 'x-request-id': requestId });
  bodies.set(requestId, res.text);
  return res;
}

async function lineOf(requestId: string): Promise<Record<string, unknown>> {
  const find = (): Record<string, unknown> | undefined => rig.gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId);
  await eventually(() => find() !== undefined, `the access line of ${requestId}`);
  return find() as Record<string, unknown>;
}

/** A chat stream's exact bytes: one chunk per choice JSON (an empty string: the usage chunk), then [DONE]. */
function sse(model: string, choices: string[]): string {
  const head = `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1700000000,"model":"${model}","choices":`;
  const usage = '[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":0}}}';
  return [...choices.map((c) => (c === '' ? `${head}${usage}` : `${head}[${c}]}`)), '[DONE]'].map((p) => `data: ${p}\n\n`).join('');
}

interface StreamRead {
  content: string;
  /** Each tool call's id, name and arguments, by index. */
  calls: Array<{ id: string; name: string; arguments: string }>;
  finishes: string[];
  usage: unknown;
  frames: string[];
}

/** A chat stream's frames read as a client reads them; checks the framing and [DONE]. */
function readStream(text: string): StreamRead {
  const frames = sseData(text);
  assert.equal(frames.at(-1), '[DONE]', text);
  const read: StreamRead = { content: '', calls: [], finishes: [], usage: undefined, frames };
  for (const frame of frames.slice(0, -1)) {
    const chunk = JSON.parse(frame) as { choices: Array<{ delta: { content?: string; tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }> }; finish_reason: string | null }>; usage?: unknown };
    if (chunk.usage !== undefined) read.usage = chunk.usage;
    for (const choice of chunk.choices) {
      read.content += choice.delta.content ?? '';
      for (const call of choice.delta.tool_calls ?? []) {
        const known = (read.calls[call.index] ??= { id: '', name: '', arguments: '' });
        known.id += call.id ?? '';
        known.name += call.function?.name ?? '';
        known.arguments += call.function?.arguments ?? '';
      }
      if (choice.finish_reason !== null) read.finishes.push(choice.finish_reason);
    }
  }
  return read;
}

describe('a whole answer', () => {
  test('an AWS key in the content is masked; the line names the answer finding', async () => {
    script = { message: { role: 'assistant', content: `Use ${AWS_KEY} for the bucket.` } };
    const res = await chat('service-fake', 'which key?', 'ans-mask');
    assert.equal(res.status, 200, res.text);
    const body = res.json() as { choices: Array<{ message: { content: string }; finish_reason: string }> };
    assert.equal(body.choices[0]?.message.content, 'Use [AWS_ACCESS_KEY_1] for the bucket.');
    assert.equal(body.choices[0]?.finish_reason, 'stop');
    assert.equal((await lineOf('ans-mask'))['guard'], 'aws_access_key:answer.choices[0].message.content:mask');
  });

  test('a card in the content is blocked: cut before it, content_filter, the usage kept', async () => {
    script = { message: { role: 'assistant', content: `Your card ${CARD} is on file. Anything else?` } };
    const res = await chat('service-fake', 'what card do I have?', 'ans-block');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json(), {
      id: 'chatcmpl-up',
      object: 'chat.completion',
      created: 1700000000,
      model: 'service-fake',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Your card ', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'content_filter' }],
      usage: { ...USAGE, prompt_tokens_details: { cached_tokens: 0 } },
    });
    const line = await lineOf('ans-block');
    assert.equal(line['guard'], 'card_number:answer.choices[0].message.content:block');
    assert.equal(line['completionTokens'], 7);
  });

  test('an e-mail address under `log` goes out as it is, and is recorded', async () => {
    script = { message: { role: 'assistant', content: 'Write to alice.jones@example.org today.' } };
    const res = await chat('service-fake', 'who?', 'ans-log');
    assert.equal((res.json() as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, 'Write to alice.jones@example.org today.');
    const line = await lineOf('ans-log');
    assert.equal(line['guard'], 'email:answer.choices[0].message.content:log');
    assert.equal(JSON.stringify(line).includes('alice.jones'), false);
  });

  test('a key in tool-call arguments is masked and the arguments stay JSON', async () => {
    script = { message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'deploy', arguments: JSON.stringify({ key: AWS_KEY, region: 'eu' }) } }] }, finish: 'tool_calls' };
    const res = await chat('service-fake', 'deploy it', 'ans-tool');
    const body = res.json() as { choices: Array<{ message: { tool_calls: Array<{ function: { arguments: string } }> } }> };
    const args = body.choices[0]?.message.tool_calls[0]?.function.arguments as string;
    assert.deepEqual(JSON.parse(args), { key: '[AWS_ACCESS_KEY_1]', region: 'eu' });
    assert.equal((await lineOf('ans-tool'))['guard'], 'aws_access_key:answer.choices[0].message.tool_calls[0].function.arguments:mask');
  });

  test('restore: the request\'s masked card comes back in the content and the arguments; another card is masked after the request\'s numbering', async () => {
    script = {
      message: {
        role: 'assistant',
        content: `Charged [CARD_NUMBER_1]; the old one was ${OTHER_CARD}.`,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'charge', arguments: '{"card":"[CARD_NUMBER_1]"}' } }],
      },
      finish: 'tool_calls',
    };
    const res = await chat('masking', `charge ${CARD}`, 'ans-restore');
    assert.equal(rig.upstream.requests.at(-1)?.body !== undefined && JSON.stringify(rig.upstream.requests.at(-1)?.body).includes(CARD), false);
    const body = res.json() as { choices: Array<{ message: { content: string; tool_calls: Array<{ function: { arguments: string } }> } }> };
    assert.equal(body.choices[0]?.message.content, `Charged ${CARD}; the old one was [CARD_NUMBER_2].`);
    assert.equal(body.choices[0]?.message.tool_calls[0]?.function.arguments, `{"card":"${CARD}"}`);
    assert.equal((await lineOf('ans-restore'))['guard'], 'card_number:messages[0].content:mask,card_number:answer.choices[0].message.content:mask');
  });

  test('restore off: the placeholder stays', async () => {
    script = { message: { role: 'assistant', content: 'Charged [CARD_NUMBER_1].' } };
    const res = await chat('no-restore', `charge ${CARD}`, 'ans-no-restore');
    assert.equal((res.json() as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, 'Charged [CARD_NUMBER_1].');
  });

  test('scan off, restore on: the card restored, an AWS key in the answer untouched', async () => {
    script = { message: { role: 'assistant', content: `Charged [CARD_NUMBER_1] with ${AWS_KEY}.` } };
    const res = await chat('restore-only', `charge ${CARD}`, 'ans-restore-only');
    assert.equal((res.json() as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, `Charged ${CARD} with ${AWS_KEY}.`);
    assert.equal((await lineOf('ans-restore-only'))['guard'], 'card_number:messages[0].content:mask');
  });
});

describe('a streamed answer', () => {
  test('an AWS key split over two chunks is masked; the usage chunk and [DONE] still come', async () => {
    script = { chunks: [delta({ role: 'assistant', content: `Use AKIAQ3EGRT` }), delta({ content: `WXZ7PLMN4K now.` }), delta({}, 'stop'), { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1700000000, model: 'm', choices: [], usage: USAGE }] };
    const res = await chat('service-fake', 'which key?', 'st-mask', { stream: true, stream_options: { include_usage: true } });
    assert.equal(
      res.text,
      sse('service-fake', [
        '{"index":0,"delta":{"role":"assistant"},"finish_reason":null}',
        '{"index":0,"delta":{"content":"Use [AWS_ACCESS_KEY_1] now."},"finish_reason":null}',
        '{"index":0,"delta":{},"finish_reason":"stop"}',
        '',
      ]),
    );
    const read = readStream(res.text);
    assert.equal(read.content, 'Use [AWS_ACCESS_KEY_1] now.');
    assert.deepEqual(read.finishes, ['stop']);
    assert.deepEqual(read.usage, { ...USAGE, prompt_tokens_details: { cached_tokens: 0 } });
    assert.equal((await lineOf('st-mask'))['guard'], 'aws_access_key:answer.choices[0].delta.content:mask');
  });

  test('a card over many one-character chunks is blocked: the text before it, content_filter, nothing after', async () => {
    const text = `Your card is ${CARD}, expiring soon; nothing more to say about it.`;
    script = { chunks: contentChunks(text, 1) };
    const res = await chat('service-fake', 'my card?', 'st-block', { stream: true });
    // Held until the window of 64 is full (its first character would go out, but never part of a word: "Your"
    // is held from its start), then scanned again after a step of 16 more characters: by then the card lies in
    // the held text, and the finding cuts the choice before it.
    assert.equal(
      res.text,
      sse('service-fake', [
        '{"index":0,"delta":{"role":"assistant"},"finish_reason":null}',
        '{"index":0,"delta":{"content":"Your card is "},"finish_reason":null}',
        '{"index":0,"delta":{},"finish_reason":"content_filter"}',
      ]),
    );
    const read = readStream(res.text);
    assert.equal(read.content, 'Your card is ');
    assert.deepEqual(read.finishes, ['content_filter']);
    assert.equal(read.usage, undefined);
    const line = await lineOf('st-block');
    assert.equal(line['guard'], 'card_number:answer.choices[0].delta.content:block');
    // The whole stream was read for its usage.
    assert.equal(line['completionTokens'], 7);
  });

  test('a key in tool-call arguments split over chunks: masked, the arguments parse', async () => {
    const args = JSON.stringify({ key: AWS_KEY, region: 'eu' });
    script = {
      chunks: [
        delta({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'deploy', arguments: args.slice(0, 12) } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: args.slice(12, 20) } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: args.slice(20) } }] }),
        delta({}, 'tool_calls'),
      ],
    };
    const res = await chat('service-fake', 'deploy', 'st-tool', { stream: true });
    const read = readStream(res.text);
    assert.deepEqual(read.calls, [{ id: 'call_1', name: 'deploy', arguments: JSON.stringify({ key: '[AWS_ACCESS_KEY_1]', region: 'eu' }) }]);
    assert.deepEqual(read.finishes, ['tool_calls']);
  });

  test('restore over chunks: the placeholder split in content and in arguments comes back as the card; the call goes out with the content\'s end', async () => {
    script = {
      chunks: [
        delta({ role: 'assistant', content: 'Charging [CARD_NU' }),
        delta({ content: 'MBER_1] now.' }),
        delta({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'charge', arguments: '{"card":"[CARD' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '_NUMBER_1]"}' } }] }),
        delta({}, 'tool_calls'),
      ],
    };
    const res = await chat('masking', `charge ${CARD}`, 'st-restore', { stream: true });
    assert.equal(
      res.text,
      sse('masking', [
        '{"index":0,"delta":{"role":"assistant"},"finish_reason":null}',
        // The content's channel is open until the finish (it might go on): the call waits for it to end.
        // What the finish releases goes out before it, in a chunk of its own.
        `{"index":0,"delta":{"content":"Charging ${CARD} now.","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"charge","arguments":"{\\"card\\":\\"${CARD}\\"}"}}]},"finish_reason":null}`,
        '{"index":0,"delta":{},"finish_reason":"tool_calls"}',
      ]),
    );
    const read = readStream(res.text);
    assert.equal(read.content, `Charging ${CARD} now.`);
    assert.deepEqual(read.calls, [{ id: 'call_1', name: 'charge', arguments: `{"card":"${CARD}"}` }]);
  });

  test('restore off: the placeholder stays in the stream', async () => {
    script = { chunks: contentChunks('Charging [CARD_NUMBER_1] now.', 5) };
    const read = readStream((await chat('no-restore', `charge ${CARD}`, 'st-no-restore', { stream: true })).text);
    assert.equal(read.content, 'Charging [CARD_NUMBER_1] now.');
  });

  // The door accepts only n = 1, but an upstream's choices are each held and cut on their own whatever it sends.
  test('two choices from the upstream: each held and cut on its own', async () => {
    const chunk = (choices: unknown[]): unknown => ({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1700000000, model: 'm', choices });
    script = {
      chunks: [
        chunk([
          { index: 0, delta: { role: 'assistant', content: 'First: fine.' }, finish_reason: null },
          { index: 1, delta: { role: 'assistant', content: `Second: ${CARD.slice(0, 8)}` }, finish_reason: null },
        ]),
        chunk([{ index: 1, delta: { content: `${CARD.slice(8)} and more` }, finish_reason: null }]),
        chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
        chunk([{ index: 1, delta: {}, finish_reason: 'stop' }]),
      ],
    };
    const res = await chat('service-fake', 'two', 'st-n2', { stream: true });
    const frames = sseData(res.text).slice(0, -1).map((f) => JSON.parse(f) as { choices: Array<{ index: number; delta: { content?: string }; finish_reason: string | null }> });
    const byChoice = [0, 1].map((i) => frames.flatMap((f) => f.choices.filter((c) => c.index === i)));
    assert.equal(byChoice[0]?.map((c) => c.delta.content ?? '').join(''), 'First: fine.');
    assert.deepEqual(byChoice[0]?.map((c) => c.finish_reason).filter((f) => f !== null), ['stop']);
    assert.equal(byChoice[1]?.map((c) => c.delta.content ?? '').join(''), 'Second: ');
    assert.deepEqual(byChoice[1]?.map((c) => c.finish_reason).filter((f) => f !== null), ['content_filter']);
  });

  test('an upstream cut mid-hold: the held text goes out scanned, then the truncation frame', async () => {
    script = { chunks: [delta({ role: 'assistant', content: `The key is ${AWS_KEY}` })] };
    const res = await chat('service-fake', 'key?', 'st-cut', { stream: true });
    const frames = sseData(res.text);
    const last = JSON.parse(frames.at(-1) as string) as { error: { code: string } };
    assert.equal(last.error.code, 'upstream_stream_truncated');
    const text = frames
      .slice(0, -1)
      .map((f) => (JSON.parse(f) as { choices: Array<{ delta: { content?: string } }> }).choices.map((c) => c.delta.content ?? '').join(''))
      .join('');
    assert.equal(text, 'The key is [AWS_ACCESS_KEY_1]');
  });
});

describe('neither scanning nor restoring', () => {
  test('a whole answer and a stream go out byte for byte as without a guard, the key unmasked', async () => {
    script = { message: { role: 'assistant', content: `Charged [CARD_NUMBER_1] with ${AWS_KEY}.` } };
    const whole = await chat('neither', `charge ${CARD}`, 'neither-whole');
    assert.equal(
      whole.text,
      `{"id":"chatcmpl-up","object":"chat.completion","created":1700000000,"model":"neither","choices":[{"index":0,"message":{"role":"assistant","content":"Charged [CARD_NUMBER_1] with ${AWS_KEY}.","refusal":null,"tool_calls":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":0}}}`,
    );
    script = { chunks: contentChunks(`Charged [CARD_NUMBER_1] with ${AWS_KEY}.`, 20) };
    const streamed = await chat('neither', `charge ${CARD}`, 'neither-stream', { stream: true });
    const payload = (d: string, f: string | null = null): string => `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1700000000,"model":"neither","choices":[{"index":0,"delta":${d},"finish_reason":${f === null ? 'null' : `"${f}"`}}]}`;
    assert.equal(
      streamed.text,
      [payload(`{"role":"assistant","content":"Charged [CARD_NUMBER"}`), payload(`{"content":"_1] with ${AWS_KEY.slice(0, 11)}"}`), payload(`{"content":"${AWS_KEY.slice(11)}."}`), payload('{}', 'stop'), '[DONE]'].map((p) => `data: ${p}\n\n`).join(''),
    );
  });
});

test("a key's usage counts its answers' findings with its requests'", async () => {
  const { gw } = rig;
  const own = await gw.state.keys.create('answers-usage', {});
  const auth = { authorization: `Bearer ${own.key}` };
  // The request masks the card; the answer restores it (no finding) and masks an AWS key.
  script = { message: { role: 'assistant', content: `Charged [CARD_NUMBER_1] with ${AWS_KEY}.` } };
  assert.equal((await postChat(gw, { model: 'masking', messages: [{ role: 'user', content: `charge ${CARD}` }] }, auth)).status, 200);
  // A streamed answer: an e-mail logged, then a card blocked.
  script = { chunks: contentChunks(`Mail alice.jones@example.org about ${CARD} today.`, 7) };
  assert.equal((await postChat(gw, { model: 'service-fake', stream: true, messages: [{ role: 'user', content: 'card?' }] }, auth)).status, 200);
  await gw.flushUsage();
  const mine = (await gw.state.usage.totals()).get(own.record.id);
  assert.deepEqual(
    { requests: mine?.requests, errors: mine?.errors, guardBlocked: mine?.guardBlocked, guardMasked: mine?.guardMasked, guardLogged: mine?.guardLogged },
    { requests: 2, errors: 0, guardBlocked: 1, guardMasked: 2, guardLogged: 1 },
  );
});

test('no sink holds a value the guard masked or blocked: log lines, answers, metrics', async () => {
  const logs = JSON.stringify(rig.gw.logs);
  for (const value of PLANTED) assert.equal(logs.includes(value), false, `a log line holds ${value}`);
  const exposed = metrics.expose();
  for (const value of PLANTED) assert.equal(exposed.includes(value), false);
  for (const id of ['ans-mask', 'ans-block', 'ans-tool', 'st-mask', 'st-block', 'st-tool', 'st-n2', 'st-cut']) {
    const body = bodies.get(id);
    assert.notEqual(body, undefined, id);
    for (const value of PLANTED) assert.equal(body?.includes(value), false, `${id} holds ${value}`);
  }
  assert.equal(bodies.get('ans-restore')?.includes(OTHER_CARD), false);
  // The answers' findings are counted with the requests' (cards blocked: ans-block, st-block, st-n2 and the usage case).
  assert.match(exposed, /portcullis_guard_findings_total\{detector="aws_access_key",action="mask"\} [1-9]/);
  assert.match(exposed, /portcullis_guard_findings_total\{detector="card_number",action="block"\} 4\n/);
});
