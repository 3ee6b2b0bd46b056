// The official `openai` npm package drives the running gateway (demo provider
// behind service-chat): plain, streaming, tool calls, and typed errors.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type TestGateway } from './harness.ts';

let gw: TestGateway;
let client: OpenAI;
before(async () => {
  gw = await startGateway();
  client = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key, maxRetries: 0, timeout: 10_000 });
});
after(() => gw.close());

test('plain completion through service-auto names the resolved alias', async () => {
  const completion = await client.chat.completions.create({
    model: 'service-auto',
    messages: [
      { role: 'developer', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Hello gateway' }] },
    ],
  });
  assert.equal(completion.object, 'chat.completion');
  assert.equal(completion.model, 'service-chat');
  assert.equal(
    completion.choices[0]?.message.content,
    'Portcullis demo provider (not a language model). You said: "Hello gateway". The request had 2 messages.',
  );
  assert.deepEqual(completion.choices[0]?.message.tool_calls, []);
  assert.equal(completion.choices[0]?.finish_reason, 'stop');
  assert.equal(completion.usage?.prompt_tokens_details?.cached_tokens, 0);
});

test('streaming without include_usage: text deltas, finish reason, no usage chunk', async () => {
  const stream = await client.chat.completions.create({
    model: 'service-chat',
    messages: [{ role: 'user', content: 'Stream me' }],
    stream: true,
  });
  let text = '';
  const ids = new Set<string>();
  const finishes: (string | null)[] = [];
  let usageChunks = 0;
  for await (const chunk of stream) {
    ids.add(chunk.id);
    assert.equal(chunk.model, 'service-chat');
    if (chunk.usage) usageChunks++;
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      finishes.push(choice.finish_reason);
    }
  }
  assert.equal(ids.size, 1);
  assert.equal(usageChunks, 0);
  assert.equal(text, 'Portcullis demo provider (not a language model). You said: "Stream me". The request had 1 message.');
  assert.equal(finishes.at(-1), 'stop');
  assert.equal(finishes.slice(0, -1).every((f) => f === null), true);
});

test('streaming with include_usage: one last chunk with choices [] and usage', async () => {
  const stream = await client.chat.completions.create({
    model: 'service-chat',
    messages: [{ role: 'user', content: 'Count me' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  const last = chunks.at(-1);
  assert.deepEqual(last?.choices, []);
  assert.equal(typeof last?.usage?.completion_tokens, 'number');
  assert.equal(last?.usage?.prompt_tokens_details?.cached_tokens, 0);
  assert.equal(chunks.filter((c) => c.usage).length, 1);
});

test('the stream helper assembles the final completion', async () => {
  const runner = client.chat.completions.stream({ model: 'service-chat', messages: [{ role: 'user', content: 'helper' }] });
  const final = await runner.finalChatCompletion();
  assert.equal(final.choices[0]?.message.content, 'Portcullis demo provider (not a language model). You said: "helper". The request had 1 message.');
  assert.equal(final.model, 'service-chat');
});

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

test('tool-call round trip: the SDK pushes choices[0].message back unchanged', async () => {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Use get_weather for Oslo' }];
  const first = await client.chat.completions.create({ model: 'service-chat', messages, tools: [weatherTool] });
  const message = first.choices[0]!.message;
  assert.equal(first.choices[0]?.finish_reason, 'tool_calls');
  assert.equal(message.content, null);
  assert.equal(message.tool_calls?.length, 1);
  const call = message.tool_calls![0]!;
  assert.equal(call.type, 'function');
  assert.equal(call.type === 'function' && call.function.name, 'get_weather');
  assert.deepEqual(call.type === 'function' && JSON.parse(call.function.arguments), { city: 'Oslo' });
  messages.push(message);
  messages.push({ role: 'tool', tool_call_id: call.id, content: 'sunny, 21 C' });
  const second = await client.chat.completions.create({ model: 'service-chat', messages, tools: [weatherTool] });
  assert.equal(
    second.choices[0]?.message.content,
    'Portcullis demo provider (not a language model). The tool returned: "sunny, 21 C". The request had 3 messages.',
  );
});

test('runTools executes the tool client-side and finishes with text (streamed tool-call deltas too)', async () => {
  let calls = 0;
  const runner = client.chat.completions.runTools({
    model: 'service-chat',
    stream: true,
    messages: [{ role: 'user', content: 'call the weather tool' }],
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          function: (args: { city: string }) => {
            calls++;
            return `weather in ${args.city}: fine`;
          },
          parse: JSON.parse,
        },
      },
    ],
  });
  const text = await runner.finalContent();
  assert.equal(calls, 1);
  assert.equal(text, 'Portcullis demo provider (not a language model). The tool returned: "weather in demo: fine". The request had 3 messages.');
});

test('typed errors: status, message, param, code and the request id', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'service-chat', messages: [{ role: 'user', content: 'x' }], n: 2 }),
    (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError);
      assert.equal(err.status, 400);
      assert.equal(err.param, 'n');
      assert.equal(err.type, 'invalid_request_error');
      assert.match(String(err.requestID), /^req_[0-9a-f]{32}$/);
      return true;
    },
  );
  await assert.rejects(client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }), (err: unknown) => {
    assert.ok(err instanceof OpenAI.NotFoundError);
    assert.equal(err.code, 'model_not_found');
    return true;
  });
  const stranger = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: 'pcl_wrong', maxRetries: 0 });
  await assert.rejects(stranger.models.list(), (err: unknown) => {
    assert.ok(err instanceof OpenAI.AuthenticationError);
    assert.equal(err.code, 'invalid_api_key');
    return true;
  });
  await assert.rejects(
    client.chat.completions.create(
      { model: 'service-chat', messages: [{ role: 'tool', content: 'x' } as never] },
      { headers: { 'x-request-id': 'sdk-trace-1' } },
    ),
    (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError);
      assert.equal(err.param, 'messages[0].tool_call_id');
      assert.equal(err.code, 'missing_required_parameter');
      assert.equal(err.requestID, 'sdk-trace-1');
      return true;
    },
  );
});

test('models.list pages through the aliases', async () => {
  const ids = [];
  for await (const model of client.models.list()) ids.push(model.id);
  assert.deepEqual(ids, ['service-chat', 'service-auto']);
});
