// A host that keeps API keys in its own database: the gateway asks the
// `authenticate` hook for every API request's policy, and the key store is not
// asked. The Map of SHA-256 hashes stands in for the host's table. The same
// hook can map an mTLS client (request.clientCertificate) or a session cookie
// (request.headers) to a policy instead of a key.
import { createHash } from 'node:crypto';
import http from 'node:http';
import { createGateway, type KeyPolicy } from 'portcullis';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const keysByHash = new Map<string, KeyPolicy>([
  [sha256('team-a-secret-key'), { id: 'team-a', allowedAliases: ['service-chat'], limits: { requestsPerMinute: 60 } }],
]);

const gateway = await createGateway({
  config: {
    dataDir: process.env['DATA_DIR'] ?? './data',
    providers: { upstream: { type: 'openai', baseUrl: process.env['UPSTREAM_URL'], apiKeyEnv: 'UPSTREAM_KEY' } },
    aliases: { 'service-chat': { provider: 'upstream', model: 'gpt-4o-mini' } },
  },
  // null: 401. The policy's id is what usage, limits and access lines count by.
  authenticate: ({ apiKey }) => (apiKey === null ? null : (keysByHash.get(sha256(apiKey)) ?? null)),
});

const server = http.createServer({ maxHeaderSize: 16 * 1024, headersTimeout: 10_000, requestTimeout: 60_000 }, gateway.handle);
server.listen(Number(process.env['PORT'] ?? 8080), '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`listening http://127.0.0.1:${port}`);
});

process.once('SIGTERM', async () => {
  server.close();
  await gateway.close();
  server.closeAllConnections();
});
