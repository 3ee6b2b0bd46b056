// docs/clients/ai-sdk-embeddings.mjs: embed and embedMany with the Vercel AI SDK.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { cosineSimilarity, embed, embedMany } from 'ai';

export default async function aiSdkEmbeddingsExample({ baseURL, apiKey }) {
  const portcullis = createOpenAICompatible({ name: 'portcullis', baseURL, apiKey });
  const model = portcullis.embeddingModel('service-embed');

  const { embedding, usage } = await embed({ model, value: 'sunny day at the beach', maxRetries: 0 });

  // One request for all values (up to 2048 per call, the SDK's default); the gateway
  // splits it again for the upstream when its model takes fewer.
  const many = await embedMany({
    model,
    values: ['sunny day at the beach', 'rainy afternoon in the city'],
    maxRetries: 0,
  });

  return {
    embedding,
    tokens: usage.tokens,
    embeddings: many.embeddings,
    manyTokens: many.usage.tokens,
    similarity: cosineSimilarity(many.embeddings[0], many.embeddings[1]),
  };
}
