// docs/clients/openai-structured.mjs: structured outputs with the `openai` package and a zod schema.
// The gateway's config needs "requestFields": ["json_schema"] (top level, or on the alias).
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';

const Weather = z.object({ city: z.string(), temperature: z.number(), unit: z.enum(['C', 'F']) });

export default async function openaiStructuredExample({ baseURL, apiKey, model = 'service-chat' }) {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });
  const messages = [{ role: 'user', content: 'Weather in Oslo?' }];

  // parse() sends the schema with strict: true and parses the answer with zod.
  const completion = await client.chat.completions.parse({ model, messages, response_format: zodResponseFormat(Weather, 'weather') });

  // stream() does the same over a stream; the final message is parsed.
  const stream = client.chat.completions.stream({ model, messages, response_format: zodResponseFormat(Weather, 'weather') });
  const final = await stream.finalChatCompletion();

  return { parsed: completion.choices[0].message.parsed, streamed: final.choices[0].message.parsed };
}
