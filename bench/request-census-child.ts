// The serving process of bench/request-census.ts, the only process whose work
// is counted: an async_hooks hook counts every async resource made here, by
// type (PROMISE among them), and the parent reads the counts and asks for heap
// snapshots over IPC while it drives requests from its own process.
//
// Arguments: UPSTREAM_ORIGIN MODE [DIST_ROOT TRANSPORT]
//   MODE gateway: a build's createGateway (DIST_ROOT/src/...), the way
//     test/gateway/harness.ts builds it: a temporary data directory with one
//     key, an "openai" provider on the upstream with TRANSPORT (fetch or node).
//   MODE bare-node / bare-fetch: the bare proxies of bench/gateway.ts.
// Only APIs that every build being compared has are used, through the small
// interfaces below rather than this build's types.

import { createHook } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { attachToBenchParent } from './gateway-server-child.ts';

/** Parent → child (with an `id` the reply carries back). */
export type CensusRequest = { type: 'key' } | { type: 'reset' } | { type: 'read' } | { type: 'snapshot'; file: string };
type CensusQuery = CensusRequest & { id: number };

/** The gateway's aliases: one per upstream answer, named like the upstream model. */
export const CENSUS_ALIASES = ['census-json', 'census-1', 'census-100', 'census-hold'] as const;

let counts: Record<string, number> = {};
/** The gateway's API key; null for the bare proxies, which check none. */
let apiKey: string | null = null;
createHook({
  init(_id, type) {
    counts[type] = (counts[type] ?? 0) + 1;
  },
}).enable();

interface GatewayModules {
  parseConfig(value: unknown, source: string | null, baseDir: string): unknown;
  openFileBackend(dataDir: string, keyOptions: { lastUsedFlushMs: number }): { keys: { create(name: string): Promise<{ key: string }> } };
  createLogger(options: { level: string; write: (line: string) => void }): unknown;
  createGateway(options: { config: unknown; state: unknown; logger: unknown; env: NodeJS.ProcessEnv; loadedAt: number; usageFlushMs: number }): { server: Server };
}

const PERIODIC_MS = 3_600_000;

async function loadBuild(distRoot: string): Promise<GatewayModules> {
  const root = pathToFileURL(path.resolve(distRoot) + path.sep);
  const load = async (file: string): Promise<Record<string, unknown>> => (await import(new URL(file, root).href)) as Record<string, unknown>;
  const [config, state, log, gateway] = await Promise.all([
    load('src/config/config-parser.js'),
    load('src/state/file-backend.js'),
    load('src/log/logger.js'),
    load('src/gateway/gateway.js'),
  ]);
  return {
    parseConfig: config['parseConfig'] as GatewayModules['parseConfig'],
    openFileBackend: state['openFileBackend'] as GatewayModules['openFileBackend'],
    createLogger: log['createLogger'] as GatewayModules['createLogger'],
    createGateway: gateway['createGateway'] as GatewayModules['createGateway'],
  };
}

async function startGateway(upstreamOrigin: string, distRoot: string, transport: string): Promise<{ server: Server; key: string }> {
  const build = await loadBuild(distRoot);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-census-'));
  process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  // The parent stops its children with SIGTERM, which would skip the 'exit' hook.
  process.on('SIGTERM', () => process.exit(0));
  const aliases = Object.fromEntries(CENSUS_ALIASES.map((alias) => [alias, { provider: 'census', model: alias }]));
  const config = build.parseConfig(
    {
      dataDir,
      // Every census request comes from 127.0.0.1, up to 200 of them at once.
      limits: { maxConnections: 4096, maxConnectionsPerAddress: 4096 },
      providers: {
        census: {
          type: 'openai',
          baseUrl: `${upstreamOrigin}/v1`,
          retry: { maxAttempts: 1 },
          // "fetch" is the default: left unset, a build that predates the setting reads the config too.
          ...(transport === 'node' ? { transport } : {}),
        },
      },
      aliases,
      auto: { default: 'census-json' },
    },
    null,
    dataDir,
  );
  // The usage and last-used flushes are periodic work, not a request's: an hour
  // apart, none falls inside a count.
  const state = build.openFileBackend(dataDir, { lastUsedFlushMs: PERIODIC_MS });
  const { key } = await state.keys.create('census');
  // Lines are formatted as in production, then dropped: their writing is not the gateway's work.
  const logger = build.createLogger({ level: 'info', write: () => undefined });
  const gateway = build.createGateway({ config, state, logger, env: {}, loadedAt: 1_700_000_000, usageFlushMs: PERIODIC_MS });
  return { server: gateway.server, key };
}

function answerQueries(): void {
  process.on('message', (message: unknown) => {
    const query = message as CensusQuery;
    if (query.type === 'key') {
      process.send?.({ type: 'key', id: query.id, key: apiKey });
    } else if (query.type === 'reset') {
      counts = {};
      process.send?.({ type: 'reset', id: query.id });
    } else if (query.type === 'read') {
      process.send?.({ type: 'read', id: query.id, counts: { ...counts } });
    } else if (query.type === 'snapshot') {
      writeHeapSnapshot(query.file);
      process.send?.({ type: 'snapshot', id: query.id });
    }
  });
}

async function main(): Promise<void> {
  const [upstreamOrigin, mode, distRoot, transport] = process.argv.slice(2);
  if (upstreamOrigin === undefined || mode === undefined) throw new Error('usage: request-census-child.js UPSTREAM_ORIGIN MODE [DIST_ROOT TRANSPORT]');
  answerQueries();
  if (mode === 'bare-node' || mode === 'bare-fetch') {
    // They read argv[2] (the upstream origin) and announce their own port.
    if (mode === 'bare-node') await import('./gateway-http-proxy.ts');
    else await import('./gateway-fetch-proxy.ts');
    return;
  }
  if (mode !== 'gateway' || distRoot === undefined || transport === undefined) throw new Error(`unknown mode ${mode}: gateway DIST_ROOT TRANSPORT, bare-node or bare-fetch`);
  const { server, key } = await startGateway(upstreamOrigin, distRoot, transport);
  apiKey = key;
  const announce = attachToBenchParent('bench/request-census-child');
  server.listen(0, '127.0.0.1', () => announce({ type: 'listening', port: (server.address() as AddressInfo).port }));
}

await main();
