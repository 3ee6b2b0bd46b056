// docs/clients/ai-sdk-tools.mjs: tools with the Vercel AI SDK. The gateway only
// returns the call; the SDK runs `execute` and sends the result back.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';

export default async function aiSdkToolsExample({ baseURL, apiKey }) {
  const portcullis = createOpenAICompatible({ name: 'portcullis', baseURL, apiKey, includeUsage: true });

  const result = await generateText({
    model: portcullis('service-chat'),
    prompt: 'What is the weather in Oslo? Use get_weather.',
    tools: {
      get_weather: tool({
        description: 'Current weather for a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `Sunny in ${city}`,
      }),
    },
    stopWhen: stepCountIs(3), // call the tool, then let the model answer with its result
    maxRetries: 0,
    timeout: 60_000,
  });

  return {
    toolCalls: result.steps[0].toolCalls.map((call) => ({ toolName: call.toolName, input: call.input })),
    toolResults: result.steps[0].toolResults.map((r) => r.output),
    text: result.text,
    steps: result.steps.map((step) => step.finishReason),
  };
}
