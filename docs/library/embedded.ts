// All three at once: the gateway under /llm of the host's own node:http server,
// API keys from the host's own key table, provider keys from its vault cache.
import { createHash } from 'node:crypto';
import http from 'node:http';
import { createGateway, type KeyPolicy } from 'portcullis';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
// The host's key table (by SHA-256) and its vault cache, refreshed by the host.
const keysByHash = new Map<string, KeyPolicy>([[sha256('team-a-secret-key'), { id: 'team-a', limits: { requestsPerMinute: 60 } }]]);
const vaultCache = new Map([['upstream', 'sk-vault-upstream-1']]);

const gateway = await createGateway({
  basePath: '/llm',
  config: {
    dataDir: process.env['DATA_DIR'] ?? './data',
    providers: { upstream: { type: 'openai', baseUrl: process.env['UPSTREAM_URL'] } },
    aliases: { 'service-chat': { provider: 'upstream', model: 'gpt-4o-mini' } },
  },
  authenticate: ({ apiKey }) => (apiKey === null ? null : (keysByHash.get(sha256(apiKey)) ?? null)),
  providerKey: (provider) => vaultCache.get(provider),
});

const server = http.createServer({ maxHeaderSize: 16 * 1024, headersTimeout: 10_000, requestTimeout: 60_000 }, (req, res) => {
  gateway.handle(req, res, () => {
    const status = req.url === '/status' ? 200 : 404;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'host ok\n' : 'not found\n');
  });
});
server.listen(Number(process.env['PORT'] ?? 8080), '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${(server.address() as { port: number }).port}`);
});

process.once('SIGTERM', async () => {
  server.close();
  await gateway.close();
  server.closeAllConnections();
});
