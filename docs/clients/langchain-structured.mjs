// docs/clients/langchain-structured.mjs: structured outputs with LangChain's withStructuredOutput.
// The gateway's config needs "requestFields": ["json_schema"] (top level, or on the alias).
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

const Weather = z.object({ city: z.string(), temperature: z.number(), unit: z.enum(['C', 'F']) });

export default async function langchainStructuredExample({ baseURL, apiKey, model = 'service-chat' }) {
  const chat = new ChatOpenAI({ model, apiKey, configuration: { baseURL }, maxRetries: 0, timeout: 60_000 });

  // The default method sends response_format json_schema with strict: true.
  const structured = chat.withStructuredOutput(Weather);
  const object = await structured.invoke('Weather in Oslo?');

  // Streamed, the parsed object arrives once, at the end.
  let streamed;
  for await (const chunk of await structured.stream('Weather in Oslo?')) streamed = chunk;

  return { object, streamed };
}
