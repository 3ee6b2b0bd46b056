// docs/clients/openai-node.mjs: the official `openai` package for Node.
import OpenAI from 'openai';

export default async function openaiNodeExample({ baseURL, apiKey }) {
  // The gateway already retries and falls back between upstreams before it
  // answers, so client retries mostly add latency; raise maxRetries to also
  // wait out 429s (the gateway sends Retry-After with them).
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });

  // service-auto lets the gateway choose; `model` in the answer names the alias it chose.
  const completion = await client.chat.completions.create({
    model: 'service-auto',
    messages: [{ role: 'user', content: 'Hello!' }],
  });

  // Streaming with usage: the last chunk has `choices: []` and the token counts.
  const stream = await client.chat.completions.create({
    model: 'service-chat',
    messages: [{ role: 'user', content: 'Stream this' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let streamed = '';
  let usage;
  for await (const chunk of stream) {
    streamed += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }

  // Tools: the gateway returns the call; your code runs it and sends the result back.
  const tools = [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
  ];
  const messages = [{ role: 'user', content: 'What is the weather in Oslo? Use get_weather.' }];
  const first = await client.chat.completions.create({ model: 'service-chat', messages, tools });
  const call = first.choices[0].message.tool_calls[0];
  const { city } = JSON.parse(call.function.arguments);
  messages.push(first.choices[0].message);
  messages.push({ role: 'tool', tool_call_id: call.id, content: `Sunny in ${city}` });
  const second = await client.chat.completions.create({ model: 'service-chat', messages, tools });

  return {
    model: completion.model,
    text: completion.choices[0].message.content,
    streamed,
    usage,
    toolCall: { name: call.function.name, arguments: call.function.arguments },
    afterTool: second.choices[0].message.content,
  };
}
