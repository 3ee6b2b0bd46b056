// Shared by the handle() tests: the real gateway, not listening itself, served
// through a host's own node:http (or node:https) server on 127.0.0.1 port 0
// beside a route of the host's; a temp data directory with one live key.
import { mkdtempSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Authenticator } from '../../src/api/keys.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import type { ListenerTlsMaterial } from '../../src/config/tls-files.ts';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import type { Scheduler } from '../../src/time/scheduler.ts';
import { fakeProvider, UPSTREAM_SECRET } from './lifecycle-fixtures.ts';

/** What the host's own code saw: its route's requests, and each next() the gateway called ("next GET /x"). */
export type HostSeen = string[];

/** The host's request listener around the gateway. */
export type HostListener = (gateway: Gateway, seen: HostSeen) => (req: IncomingMessage, res: ServerResponse) => void;

/** GET /host/ping is the host's; everything else goes to gateway.handle(req, res), without next. */
export const plainHost: HostListener = (gateway, seen) => (req, res) => {
  if (hostRoute(req, res, seen)) return;
  gateway.handle(req, res);
};

/** As plainHost, with a next() that answers the host's own 404 (Express/Connect style). */
export const hostWithNext: HostListener = (gateway, seen) => (req, res) => {
  if (hostRoute(req, res, seen)) return;
  gateway.handle(req, res, () => {
    seen.push(`next ${req.method} ${req.url}`);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('the host has no such page');
  });
};

function hostRoute(req: IncomingMessage, res: ServerResponse, seen: HostSeen): boolean {
  if (req.url !== '/host/ping') return false;
  seen.push('host /host/ping');
  res.writeHead(200, { 'content-type': 'text/plain' }).end('host pong');
  return true;
}

export interface HostedGateway {
  gateway: Gateway;
  host: http.Server;
  /** The host server's origin ("http://127.0.0.1:port"). */
  hostUrl: string;
  seen: HostSeen;
  key: string;
  keyId: string;
  logs: Record<string, unknown>[];
  /** The access lines ("request") logged so far. */
  accessLines(): Record<string, unknown>[];
  close(): Promise<void>;
}

export interface HostedOptions {
  upstreamUrl: string;
  /** More config file sections (listen.trustedProxies, ...). */
  config?: Record<string, unknown>;
  basePath?: string;
  listener?: HostListener;
  scheduler?: Scheduler;
  /** An https host server with these options (certificates, requestCert). */
  https?: https.ServerOptions;
  /** The host's Authenticator in place of the data directory's keys. */
  authenticate?: Authenticator;
  /** The gateway's own listener (gateway.server) serves HTTPS with this (listen.tls). */
  tls?: ListenerTlsMaterial;
}

export async function startHostedGateway(options: HostedOptions): Promise<HostedGateway> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-handle-'));
  const config = parseConfig(
    {
      dataDir,
      providers: { up: fakeProvider(options.upstreamUrl) },
      aliases: { 'service-a': { provider: 'up', model: 'model-a' } },
      auto: { default: 'service-a' },
      ...options.config,
    },
    null,
    dataDir,
  );
  const state = openFileBackend(dataDir, { watch: false });
  const created = await state.keys.create('hosted');
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const gateway = createGateway({
    config,
    state,
    logger,
    env: { UPSTREAM_KEY: UPSTREAM_SECRET },
    loadedAt: 1_700_000_000,
    ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
    ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }),
    ...(options.authenticate === undefined ? {} : { authenticate: options.authenticate }),
    ...(options.tls === undefined ? {} : { tls: options.tls }),
  });
  const seen: HostSeen = [];
  const listener = (options.listener ?? plainHost)(gateway, seen);
  const host = options.https === undefined ? http.createServer(listener) : https.createServer(options.https, listener);
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  const { port } = host.address() as AddressInfo;
  return {
    gateway,
    host,
    hostUrl: `${options.https === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    seen,
    key: created.key,
    keyId: created.record.id,
    logs,
    accessLines: () => logs.filter((l) => l['msg'] === 'request'),
    async close() {
      host.closeAllConnections();
      await new Promise<void>((resolve) => host.close(() => resolve()));
      gateway.endShutdownNow();
      await gateway.close();
      await state.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The fields of an access line that do not depend on when or as which request it ran. */
export function withoutIdentity(line: Record<string, unknown>): Record<string, unknown> {
  const { time: _time, requestId: _requestId, traceId: _traceId, ...rest } = line;
  return rest;
}
