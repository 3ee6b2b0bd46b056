// docs/clients/ai-sdk-structured.mjs: structured outputs with the Vercel AI SDK.
// The gateway's config needs "requestFields": ["json_schema"] (top level, or on the alias).
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, streamObject } from 'ai';
import { z } from 'zod';

const Weather = z.object({ city: z.string(), temperature: z.number(), unit: z.enum(['C', 'F']) });

export default async function aiSdkStructuredExample({ baseURL, apiKey, model = 'service-chat' }) {
  const portcullis = createOpenAICompatible({
    name: 'portcullis',
    baseURL,
    apiKey,
    // Without it the SDK sends response_format json_object and leaves the schema out.
    supportsStructuredOutputs: true,
  });

  const generated = await generateObject({ model: portcullis(model), schema: Weather, prompt: 'Weather in Oslo?', maxRetries: 0, timeout: 60_000 });

  const stream = streamObject({ model: portcullis(model), schema: Weather, prompt: 'Weather in Oslo?', maxRetries: 0, timeout: 60_000 });
  // The stream must be read for its promises to settle.
  for await (const partial of stream.partialObjectStream) void partial;

  return { object: generated.object, streamed: await stream.object };
}
