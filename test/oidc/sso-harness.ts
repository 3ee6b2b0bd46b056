// The admin server with single sign-on against a real provider
// (./provider-harness.ts), wired as `portcullis serve` wires it: the real
// gateway's config and routes behind view(), a file state backend in a temp
// directory, the built dashboard, and a recording audit trail. The browser
// reaches the admin listener as http://localhost:<port> and the provider as
// http://127.0.0.1:<port>: two different sites, as a company's provider and
// its gateway are, so SameSite rules apply as they would there.
//
// view() reads a config the test may replace (setOidc): the way a reload
// swaps it, and the way the refusal tests point the gateway elsewhere.
import { writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createAdminServer } from '../../src/admin/admin-server.ts';
import { createBootstrapToken } from '../../src/admin/bootstrap-token.ts';
import type { GatewayConfig } from '../../src/config/config.ts';
import { embeddedConfigValue } from '../../src/config/config-loader.ts';
import { parseConfig } from '../../src/config/config-parser.ts';
import { createGateway } from '../../src/gateway/gateway.ts';
import { createLogger } from '../../src/log/logger.ts';
import { openFileBackend } from '../../src/state/file-backend.ts';
import { builtDashboardDir } from '../admin/harness.ts';
import { recordingAuditTrail, type RecordingAuditTrail } from '../admin/recording-audit-trail.ts';
import { tempDir } from '../support/temp-dir.ts';
import { startProvider, type TestProvider } from './provider-harness.ts';

export const CLIENT_ID = 'portcullis';
export const PUBLIC_CLIENT_ID = 'portcullis-public';
export const CLIENT_SECRET = 'a client secret of the test, 32+ characters long';
/** Login names at the provider and their claims. */
export const ACCOUNTS: Record<string, Record<string, unknown>> = {
  alice: { email: 'alice@Example.COM', email_verified: true, preferred_username: 'alice', groups: ['staff'] },
  bob: { email: 'bob@example.com', email_verified: true, preferred_username: 'bob', groups: ['gateway-admins'] },
  // Claims an allowed email, but the provider did not verify it.
  mallory: { email: 'alice@example.com', email_verified: false, preferred_username: 'mallory', groups: ['staff'] },
};

export interface SsoGateway {
  /** http://localhost:<port>: the dashboard's origin in the browser. */
  adminUrl: string;
  provider: TestProvider;
  /** The one-time token that signs in while no admin password is set (and password login is on). */
  bootstrapToken: string;
  audit: RecordingAuditTrail;
  logs: Record<string, unknown>[];
  /** The admin.oidc the gateway uses unless a test changes it. */
  baseOidc: Record<string, unknown>;
  /** Serve admin.oidc from now on (as a reload would); null removes it. */
  setOidc(oidc: Record<string, unknown> | null): void;
  /** Move the admin server's clock (sessions, login transactions, ID token checks). */
  setClockOffset(ms: number): void;
  close(): Promise<void>;
}

function listen(server: Server): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startSsoGateway(): Promise<SsoGateway> {
  const dataDir = tempDir('sso-it');
  const secretFile = path.join(dataDir, 'oidc-client-secret');
  writeFileSync(secretFile, `${CLIENT_SECRET}\n`, { mode: 0o600 });
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'info',
    write: (text) => {
      for (const line of text.split('\n')) if (line !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  const embedded = embeddedConfigValue() as Record<string, unknown>;
  const parse = (oidc: Record<string, unknown> | null): GatewayConfig =>
    parseConfig({ ...embedded, dataDir, admin: oidc === null ? {} : { oidc } }, null, dataDir);
  let config = parse(null);
  const state = openFileBackend(dataDir, { watch: false });
  const gateway = createGateway({ config, state, logger, env: {} });
  const audit = recordingAuditTrail();
  let clockOffsetMs = 0;
  const bootstrap = createBootstrapToken();
  const admin = createAdminServer({
    view: () => ({ config, targets: gateway.targets }),
    state,
    audit,
    clock: () => Date.now() + clockOffsetMs,
    dataDir,
    limits: config.limits,
    logger,
    bootstrap,
    session: { ttlMs: config.admin.sessionTtlMs, idleMs: config.admin.sessionIdleMs, secureCookies: false },
    dashboardDir: builtDashboardDir(),
    env: {},
  });
  let provider: TestProvider | undefined;
  const close = async (): Promise<void> => {
    admin.server.closeAllConnections();
    if (admin.server.listening) await new Promise<void>((resolve) => admin.server.close(() => resolve()));
    await gateway.close();
    await provider?.close();
    await state.close();
  };
  try {
    const adminUrl = `http://localhost:${(await listen(admin.server)).port}`;
    const redirectUri = `${adminUrl}/sso/callback`;
    provider = await startProvider(
      [
        { clientId: CLIENT_ID, secret: CLIENT_SECRET, redirectUri, idTokenAlg: 'RS256' },
        { clientId: PUBLIC_CLIENT_ID, secret: null, redirectUri, idTokenAlg: 'ES256' },
      ],
      ACCOUNTS,
    );
    const baseOidc = {
      issuer: provider.issuer,
      clientId: CLIENT_ID,
      clientSecretFile: secretFile,
      redirectUrl: redirectUri,
      scopes: ['openid', 'profile', 'email', 'groups'],
      allowedUsers: ['alice@example.com'],
      allowedGroups: ['gateway-admins'],
      label: 'Sign in with Example ID',
      timeoutMs: 5000,
    };
    config = parse(baseOidc);
    return {
      adminUrl,
      provider,
      bootstrapToken: bootstrap.token,
      audit,
      logs,
      baseOidc,
      setOidc: (oidc) => {
        config = parse(oidc);
      },
      setClockOffset: (ms) => {
        clockOffsetMs = ms;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
