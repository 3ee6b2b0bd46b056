// docs/clients/ai-sdk-images.mjs: images with the Vercel AI SDK. By default the SDK
// downloads every image URL and sends the bytes as a data: URL, which the gateway
// refuses (400, code invalid_value). Declaring that the provider takes https image
// URLs makes the SDK pass the URL through untouched.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText } from 'ai';

export default async function aiSdkImagesExample({ baseURL, apiKey, model = 'service-auto' }) {
  const portcullis = createOpenAICompatible({
    name: 'portcullis',
    baseURL,
    apiKey,
    supportedUrls: () => ({ 'image/*': [/^https:\/\//] }),
  });

  const result = await generateText({
    model: portcullis(model),
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image', image: new URL('https://example.com/cat.png') },
        ],
      },
    ],
    maxRetries: 0,
    timeout: 60_000,
  });
  return { model: result.response.modelId, text: result.text };
}
