// docs/clients/ai-sdk-errors.mjs: what a refused request looks like to the Vercel AI SDK.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText } from 'ai';

export default async function aiSdkErrorsExample({ baseURL, apiKey }) {
  const portcullis = createOpenAICompatible({ name: 'portcullis', baseURL, apiKey });
  try {
    await generateText({ model: portcullis('no-such-alias'), prompt: 'Hi', maxRetries: 0, timeout: 60_000 });
  } catch (err) {
    if (!APICallError.isInstance(err)) throw err;
    return {
      status: err.statusCode,
      message: err.message, // the envelope's error.message
      error: err.data?.error, // the envelope's inside: { message, type, param, code }
      retryable: err.isRetryable, // true for 408, 409, 429 and 5xx
      requestId: err.responseHeaders?.['x-request-id'],
    };
  }
  throw new Error('the gateway accepted an unknown alias');
}
