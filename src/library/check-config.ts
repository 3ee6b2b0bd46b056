// checkConfig: a host's config value checked as the config file is, every
// problem returned as data; and GatewayConfigError, the one error a host sees
// for a config that cannot run. The declarations this file emits name only
// src/api types, so the public API report stays the contract and nothing of the
// internal config model (GatewayConfig, ConfigError) becomes public.
import path from 'node:path';
import type { CheckConfigOptions, ConfigIssue } from '../api/config.ts';
import { formatIssue, type ConfigIssue as InternalConfigIssue } from '../config/config-issues.ts';
import { checkGatewayConfig, sourceInBaseDir } from './config-check.ts';
import { checkProviderTypes } from './provider-registry.ts';

/** True when A and B are the same type; a compile-time check, nothing at run time. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// The public codes are the checker's codes, no more and no fewer: a new
// internal code fails the build here until the API (and its report) says so.
const codesMatch: Same<InternalConfigIssue['code'], ConfigIssue['code']> = true;
void codesMatch;

/** The message of a GatewayConfigError: each problem on its own line, path first, after the config's source. */
function configErrorMessage(issues: readonly ConfigIssue[], source: string): string {
  return `${source}: ${issuesText(issues)}`;
}

/** The problems without the source: one issue as "path: message", more as a count and one indented line each. */
function issuesText(issues: readonly ConfigIssue[]): string {
  if (issues.length === 1) return formatIssue(issues[0] as ConfigIssue);
  return `${issues.length} problems\n${issues.map((issue) => `  ${formatIssue(issue)}`).join('\n')}`;
}

/**
 * A config the gateway cannot run with: every problem in `issues`, and listed
 * in the message after `source` (where the config came from, a file's path;
 * default "gateway config"). A host's config reader may throw one from the
 * function it gives reload(): the reload is then refused with these issues.
 */
export class GatewayConfigError extends Error {
  override readonly name = 'GatewayConfigError';
  readonly code = 'invalid_config';
  readonly issues: readonly ConfigIssue[];
  /** The message without the source. */
  readonly problem: string;
  constructor(issues: readonly ConfigIssue[], source?: string) {
    super(configErrorMessage(issues, source ?? 'gateway config'));
    this.issues = issues;
    this.problem = issuesText(issues);
  }
}

/**
 * Every problem createGateway would refuse `config` for, [] when there is none:
 * the config file's checks (docs/config.md); once those pass, the certificate
 * and key files of each TLS listener (listen.tls; admin.tls when the admin
 * listener is enabled) and each provider's upstream key (apiKeyEnv set,
 * apiKeyFile readable; a provider options.providerKey answers for needs
 * neither) and, with security.requireFips, a FIPS provider in this process
 * (fips_unavailable) and, while the admin listener is enabled, an admin password
 * in dataDir's admin.json stored with a hash it approves (conflict), all in one
 * list. Starts nothing; reads only the files the config names and admin.json. Throws an Error naming a malformed providerTypes entry.
 */
export function checkConfig(config: unknown, options: CheckConfigOptions = {}): ConfigIssue[] {
  const baseDir = path.resolve(options.baseDir ?? process.cwd());
  const checked = checkGatewayConfig(config, {
    source: sourceInBaseDir(baseDir),
    baseDir,
    env: options.env ?? process.env,
    providerTypes: checkProviderTypes(options.providerTypes),
    providerKey: options.providerKey,
  });
  return checked.ok ? [] : checked.issues;
}
