// What `serve` prints on stderr once it listens: where, with what config and
// state, and what a newcomer does next (a first key, the admin password).
import type { GatewayConfig } from '../config/config.ts';
import { providerNotices } from '../config/provider-types.ts';
import { aliasLabels } from '../config/alias-kind-config.ts';

export interface BannerFacts {
  config: GatewayConfig;
  apiAddress: string;
  adminAddress: string | null;
  metricsAddress: string | null;
  socketFromSystemd: boolean;
  stateKind: string;
  /** Where the data directory came from, when not from the config (e.g. an environment variable). */
  dataDirOrigin: string | null;
  /** Keys not revoked. */
  keyCount: number;
  bootstrapToken: string | null;
  /** The command to suggest (portcullis, or how it was run). */
  cli: string;
}

export function serveBanner(facts: BannerFacts): string {
  const { config, cli } = facts;
  return (
    `Portcullis listening on ${facts.apiAddress}/v1${facts.socketFromSystemd ? ' (socket from systemd)' : ''}\n` +
    (facts.adminAddress === null ? '' : `  dashboard and admin API: ${facts.adminAddress}/\n`) +
    (facts.metricsAddress === null ? '' : `  metrics: ${facts.metricsAddress}/metrics\n`) +
    `  config: ${config.source ?? 'embedded default'}; state: ${facts.stateKind}\n` +
    `  data directory: ${config.dataDir}${facts.dataDirOrigin === null ? '' : ` (${facts.dataDirOrigin})`}\n` +
    `  aliases: ${[...aliasLabels(config.aliases), 'service-auto'].join(', ')}\n` +
    providerNotices(Object.values(config.providers))
      .map((notice) => `  ${notice}\n`)
      .join('') +
    (facts.keyCount === 0 ? `  No API keys yet. Create one with: ${cli} keys create --name my-app\n` : '') +
    (facts.bootstrapToken === null
      ? ''
      : `  No admin password yet. Log in to the dashboard once with this one-time token, then set a password:\n` +
        `    ${facts.bootstrapToken}\n` +
        `  (or set one now with: ${cli} admin set-password)\n`)
  );
}
