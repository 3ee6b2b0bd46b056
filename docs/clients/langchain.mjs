// docs/clients/langchain.mjs: LangChain's ChatOpenAI (`@langchain/openai`).
import { HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

export default async function langchainExample({ baseURL, apiKey }) {
  const model = new ChatOpenAI({
    model: 'service-chat',
    apiKey,
    configuration: { baseURL },
    maxRetries: 0,
    timeout: 60_000,
  });

  const reply = await model.invoke('Hello!');

  // Streams ask for usage by default (streamUsage: true); it arrives on the last chunk.
  let streamed = '';
  let streamUsage;
  for await (const chunk of await model.stream('Stream this')) {
    streamed += chunk.content;
    if (chunk.usage_metadata) streamUsage = chunk.usage_metadata;
  }

  // Tools: bindTools sends the definitions; the answer carries tool_calls, which your code runs.
  const getWeather = tool(async ({ city }) => `Sunny in ${city}`, {
    name: 'get_weather',
    description: 'Current weather for a city',
    schema: z.object({ city: z.string() }),
  });
  const withTools = model.bindTools([getWeather]);
  const question = new HumanMessage('What is the weather in Oslo? Use get_weather.');
  const asked = await withTools.invoke([question]);
  const call = asked.tool_calls[0];
  // Invoked with the whole call, the tool returns a ToolMessage (it carries `name`,
  // which the gateway accepts and does not forward).
  const result = await getWeather.invoke(call);
  const answered = await withTools.invoke([question, asked, result]);

  return {
    text: reply.content,
    tokens: [reply.usage_metadata.input_tokens, reply.usage_metadata.output_tokens],
    streamed,
    streamTokens: [streamUsage.input_tokens, streamUsage.output_tokens],
    toolCall: { name: call.name, args: call.args },
    afterTool: answered.content,
  };
}
