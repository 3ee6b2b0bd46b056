// docs/clients/openai-errors.mjs: what a refused request looks like to the `openai` package.
import OpenAI from 'openai';

export default async function openaiErrorsExample({ baseURL, apiKey }) {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });
  try {
    await client.chat.completions.create({
      model: 'service-chat',
      messages: [{ role: 'user', content: 'Hi' }],
      n: 2, // the gateway accepts only n = 1
    });
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    // err.error is the inside of the gateway's envelope {"error":{"message","type","param","code"}}
    return {
      badRequest: err instanceof OpenAI.BadRequestError,
      status: err.status,
      type: err.type,
      code: err.code,
      param: err.param,
      message: err.error?.message,
      requestId: err.requestID, // the gateway's x-request-id: quote it when asking for help
    };
  }
  throw new Error('the gateway accepted n: 2');
}
