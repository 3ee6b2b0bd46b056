// The official `openai` npm package reads answers the egress guard changed:
// a stream cut by a block (finish_reason content_filter, no usage lost), a
// stream whose key was masked and whose tool-call arguments were restored,
// and a whole answer cut the same way; no error on any of them. Under the
// answer scan the stream helper's tool_calls.function.arguments.done fires
// for every call (held text goes out before the chunk with the finish).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startGuardRig, type GuardRig } from './guard-rig.ts';

const AWS_KEY = 'AKIAQ3EGRTWXZ7PLMN4K';
const CARD = '4111111111111111';
const USAGE = { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 };

let rig: GuardRig;
let client: OpenAI;
let chunks: unknown[] = [];

function delta(d: Record<string, unknown>, finish: string | null = null): unknown {
  return { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1700000000, model: 'm', choices: [{ index: 0, delta: d, finish_reason: finish }] };
}
const usageChunk = { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1700000000, model: 'm', choices: [], usage: USAGE };

before(async () => {
  rig = await startGuardRig({
    aliases: {
      'service-fake': { provider: 'fake', model: 'upstream-model-1' },
      'masking': { provider: 'fake', model: 'upstream-model-1', guard: { detectors: { secrets: 'mask', card_number: 'mask' }, answers: { scan: true, restore: true, holdBackChars: 64 } } },
    },
    guard: { detectors: { secrets: 'mask', card_number: 'block' }, answers: { scan: true, restore: true, holdBackChars: 64 } },
  });
  rig.upstream.handle = (req, res) => {
    if ((req.body as { stream?: boolean }).stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion', created: 1700000000, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: `Card ${CARD} on file.` }, finish_reason: 'stop' }], usage: USAGE }));
  };
  client = new OpenAI({ baseURL: `${rig.gw.baseUrl}/v1`, apiKey: rig.gw.key, maxRetries: 0, timeout: 10_000 });
});
after(() => rig.close());

test('a streamed answer cut by a block: the text before it, content_filter, the usage chunk', async () => {
  chunks = [delta({ role: 'assistant', content: 'Your card is ' }), delta({ content: `${CARD.slice(0, 6)}` }), delta({ content: `${CARD.slice(6)} and that is all.` }), delta({}, 'stop'), usageChunk];
  const stream = await client.chat.completions.create({ model: 'service-fake', messages: [{ role: 'user', content: 'my card?' }], stream: true, stream_options: { include_usage: true } });
  let text = '';
  const finishes: string[] = [];
  let usage: unknown;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      if (choice.finish_reason !== null) finishes.push(choice.finish_reason);
    }
  }
  assert.equal(text, 'Your card is ');
  assert.deepEqual(finishes, ['content_filter']);
  assert.deepEqual(usage, { ...USAGE, prompt_tokens_details: { cached_tokens: 0 } });
});

test('a streamed answer with a masked key and restored tool-call arguments, read with the stream helper', async () => {
  chunks = [
    delta({ role: 'assistant', content: `Key ${AWS_KEY.slice(0, 10)}` }),
    delta({ content: `${AWS_KEY.slice(10)}; charging.` }),
    delta({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'charge', arguments: '{"card":"[CARD_NU' } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: 'MBER_1]"}' } }] }),
    delta({}, 'tool_calls'),
  ];
  const runner = client.chat.completions.stream({ model: 'masking', messages: [{ role: 'user', content: `charge ${CARD}` }] });
  const completion = await runner.finalChatCompletion();
  const message = completion.choices[0]?.message;
  assert.equal(message?.content, 'Key [AWS_ACCESS_KEY_1]; charging.');
  assert.equal(message?.tool_calls?.[0]?.type === 'function' ? message.tool_calls[0].function.arguments : undefined, `{"card":"${CARD}"}`);
  assert.equal(completion.choices[0]?.finish_reason, 'tool_calls');
});

test('a whole answer cut by a block', async () => {
  const completion = await client.chat.completions.create({ model: 'service-fake', messages: [{ role: 'user', content: 'my card?' }] });
  assert.equal(completion.choices[0]?.message.content, 'Card ');
  assert.equal(completion.choices[0]?.finish_reason, 'content_filter');
});

describe('the stream helper\'s tool_calls.function.arguments.done, under the answer scan', () => {
  /** Each done event as `index:name:arguments`, and the calls of the final completion. */
  async function doneEvents(): Promise<{ done: string[]; calls: string[][] }> {
    const runner = client.chat.completions.stream({ model: 'service-fake', messages: [{ role: 'user', content: 'go' }] });
    const done: string[] = [];
    runner.on('tool_calls.function.arguments.done', (e) => done.push(`${e.index}:${e.name}:${e.arguments}`));
    const completion = await runner.finalChatCompletion();
    const calls = (completion.choices[0]?.message.tool_calls ?? []).map((t) => (t.type === 'function' ? [t.id, t.function.name, t.function.arguments] : []));
    return { done, calls };
  }

  test('one short call, all of it held until the finish: the event fires, the finish after the arguments', async () => {
    chunks = [
      delta({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      delta({}, 'tool_calls'),
    ];
    assert.deepEqual(await doneEvents(), { done: ['0:weather:{"city":"Paris"}'], calls: [['call_a', 'weather', '{"city":"Paris"}']] });
  });

  test('interleaved calls, a key split across the switch: masked, and the event fires for every call', async () => {
    chunks = [
      delta({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"k":"' } }] }),
      delta({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{"x":' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: AWS_KEY.slice(0, 8) } }] }),
      delta({ tool_calls: [{ index: 1, function: { arguments: '1}' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: `${AWS_KEY.slice(8)}"}` } }] }),
      delta({}, 'tool_calls'),
    ];
    assert.deepEqual(await doneEvents(), {
      done: ['0:f:{"k":"[AWS_ACCESS_KEY_1]"}', '1:g:{"x":1}'],
      calls: [
        ['call_a', 'f', '{"k":"[AWS_ACCESS_KEY_1]"}'],
        ['call_b', 'g', '{"x":1}'],
      ],
    });
  });

  test('content, then a call: the content whole and the event for the call', async () => {
    chunks = [
      delta({ role: 'assistant', content: `Looking up ${AWS_KEY.slice(0, 6)}` }),
      delta({ content: `${AWS_KEY.slice(6)}.` }),
      delta({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'find', arguments: '{"q":"x"}' } }] }),
      delta({}, 'tool_calls'),
    ];
    const runner = client.chat.completions.stream({ model: 'service-fake', messages: [{ role: 'user', content: 'go' }] });
    const done: string[] = [];
    runner.on('tool_calls.function.arguments.done', (e) => done.push(`${e.index}:${e.name}:${e.arguments}`));
    const completion = await runner.finalChatCompletion();
    assert.equal(completion.choices[0]?.message.content, 'Looking up [AWS_ACCESS_KEY_1].');
    assert.deepEqual(done, ['0:find:{"q":"x"}']);
  });
});
