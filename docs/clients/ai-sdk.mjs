// docs/clients/ai-sdk.mjs: the Vercel AI SDK (`ai` with `@ai-sdk/openai-compatible`).
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText } from 'ai';

export default async function aiSdkExample({ baseURL, apiKey }) {
  const portcullis = createOpenAICompatible({
    name: 'portcullis',
    baseURL,
    apiKey,
    includeUsage: true, // asks for stream_options.include_usage, so streams report usage
  });

  const generated = await generateText({
    model: portcullis('service-chat'),
    prompt: 'Hello!',
    maxRetries: 0,
    timeout: 60_000,
  });

  const stream = streamText({
    model: portcullis('service-chat'),
    prompt: 'Stream this',
    maxRetries: 0,
    timeout: 60_000,
  });
  let streamed = '';
  for await (const delta of stream.textStream) streamed += delta;

  return {
    text: generated.text,
    finishReason: generated.finishReason,
    usage: { inputTokens: generated.usage.inputTokens, outputTokens: generated.usage.outputTokens },
    streamed,
    streamFinishReason: await stream.finishReason,
    streamUsage: (await stream.usage).outputTokens,
  };
}
