// The gateway inside an existing node:http server, next to the host's own
// routes: everything under /llm goes to the gateway, the rest stays the host's.
// API keys are the gateway's own, kept in DATA_DIR (created with `portcullis
// keys create --name NAME --data-dir "$DATA_DIR"`).
import http from 'node:http';
import { createGateway } from 'portcullis';

const gateway = await createGateway({
  basePath: '/llm',
  config: {
    dataDir: process.env['DATA_DIR'] ?? './data',
    providers: { upstream: { type: 'openai', baseUrl: process.env['UPSTREAM_URL'], apiKeyEnv: 'UPSTREAM_KEY' } },
    aliases: { 'service-chat': { provider: 'upstream', model: 'gpt-4o-mini' } },
  },
});

// The settings the gateway's own listener would set: the host's server carries them.
const server = http.createServer({ maxHeaderSize: 16 * 1024, headersTimeout: 10_000, requestTimeout: 60_000 }, (req, res) => {
  // No body parser before the gateway: it reads the request body itself.
  gateway.handle(req, res, () => {
    if (req.url === '/status') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('host ok\n');
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
});
server.keepAliveTimeout = 5_000;

server.listen(Number(process.env['PORT'] ?? 8080), '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`listening http://127.0.0.1:${port}`);
});

process.once('SIGTERM', async () => {
  server.close(); // no new connections; idle ones end
  await gateway.close(); // in-flight API requests drain, usage is written
  server.closeAllConnections();
});
