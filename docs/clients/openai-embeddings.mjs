// docs/clients/openai-embeddings.mjs: embeddings with the `openai` SDK for Node.
import OpenAI from 'openai';

export default async function openaiEmbeddingsExample({ baseURL, apiKey }) {
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });

  // Without encoding_format the SDK asks for base64 and decodes it itself:
  // each embedding is a number[] either way, the model's float32 values exactly.
  const answer = await client.embeddings.create({
    model: 'service-embed',
    input: ['The cat sat on the mat.', 'A dog slept on the rug.'],
  });

  // Shorter vectors, from a model that takes `dimensions` (the alias says so in the
  // config; elsewhere this is a 400 with param 'dimensions').
  const short = await client.embeddings.create({
    model: 'service-embed',
    input: 'The cat sat on the mat.',
    dimensions: 64,
  });

  return {
    model: answer.model,
    vectors: answer.data.map((d) => d.embedding),
    usage: answer.usage,
    short: short.data[0].embedding,
  };
}
