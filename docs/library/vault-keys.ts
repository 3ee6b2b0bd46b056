// Provider keys from the host's vault: `providerKey` is asked on every upstream
// exchange, synchronously, so the host keeps a cache and refreshes it on its
// own schedule; a rotated key is used by the next exchange without a reload.
// undefined falls back to the config's apiKeyEnv/apiKeyFile, if any.
import { createHash } from 'node:crypto';
import { createGateway } from 'portcullis';

/** Stands in for the vault client: the current value of a secret. */
const vault = new Map([['secret/llm/upstream', 'sk-vault-upstream-1']]);
async function readVault(secretPath: string): Promise<string | undefined> {
  return vault.get(secretPath);
}

const vaultCache = new Map<string, string>();
async function refreshVault(): Promise<void> {
  const key = await readVault('secret/llm/upstream');
  if (key !== undefined) vaultCache.set('upstream', key);
}
await refreshVault();
const refresher = setInterval(() => void refreshVault().catch(() => {}), 60_000);

const gateway = await createGateway({
  config: {
    dataDir: process.env['DATA_DIR'] ?? './data',
    providers: { upstream: { type: 'openai', baseUrl: process.env['UPSTREAM_URL'] } },
    aliases: { 'service-chat': { provider: 'upstream', model: 'gpt-4o-mini' } },
    // Standalone listen() starts the admin listener too unless it is turned off.
    admin: { enabled: false },
  },
  providerKey: (provider) => vaultCache.get(provider),
  // The clients' key: one, given to this process as its SHA-256 (own-keys.ts shows a key table).
  authenticate: ({ apiKey }) => (apiKey !== null && createHash('sha256').update(apiKey).digest('hex') === process.env['CLIENT_KEY_SHA256'] ? { id: 'client' } : null),
});

const address = await gateway.listen({ port: Number(process.env['PORT'] ?? 8080), host: '127.0.0.1' });
console.log(`listening ${address.url}`);

process.once('SIGTERM', async () => {
  clearInterval(refresher);
  await gateway.close();
});
