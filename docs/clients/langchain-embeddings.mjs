// docs/clients/langchain-embeddings.mjs: LangChain's OpenAIEmbeddings (`@langchain/openai`).
import { OpenAIEmbeddings } from '@langchain/openai';

export default async function langchainEmbeddingsExample({ baseURL, apiKey }) {
  const embeddings = new OpenAIEmbeddings({
    model: 'service-embed', // without it LangChain asks for text-embedding-ada-002
    apiKey,
    configuration: { baseURL },
    batchSize: 512, // texts per request; embedDocuments sends more as several requests
    maxRetries: 0,
    timeout: 60_000,
  });

  const query = await embeddings.embedQuery('What did the cat sit on?');
  const documents = await embeddings.embedDocuments(['The cat sat on the mat.', 'A dog slept on the rug.']);

  return { query, documents };
}
