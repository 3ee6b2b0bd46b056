// Settings a running gateway cannot change: its sockets are bound, its data
// directory and state backend are open. A reload keeps the running values of
// these and names each one that the new file changes; everything else applies.
import type { GatewayConfig } from '../config/config.ts';
import { telemetryForComparison } from '../config/telemetry-config.ts';

export type SettingValue = string | number | boolean | null;

export interface RestartOnlyChange {
  /** Path in the config file, e.g. `listen.port`. */
  setting: string;
  running: SettingValue;
  configured: SettingValue;
}

/**
 * The restart-only parts of the config. `limits.maxHeaderBytes` is here
 * because node fixes it when the server is made; the other limits apply.
 * `listen.tls` and `admin.tls` are part of `listen` and `admin`: turning TLS
 * on or off, its paths, clientAuth and minVersion need a restart, while a
 * reload re-reads the files at the running paths (src/library/listener-certificates.ts).
 */
const RESTART_ONLY: ReadonlyArray<{ setting: string; of: (c: GatewayConfig) => unknown }> = [
  { setting: 'listen', of: (c) => c.listen },
  { setting: 'dataDir', of: (c) => c.dataDir },
  { setting: 'admin', of: (c) => ({ ...c.admin, oidc: undefined }) }, // admin.oidc applies on reload
  { setting: 'state', of: (c) => c.state },
  { setting: 'limits.maxHeaderBytes', of: (c) => c.limits.maxHeaderBytes },
  { setting: 'telemetry', of: (c) => telemetryForComparison(c.telemetry) }, // telemetry: the exporter is built once
  { setting: 'audit', of: (c) => c.audit }, // audit: the audit log is opened with the state backend
  { setting: 'responses.store', of: (c) => c.responses.store }, // the response store is opened with the state backend, its limits with it
  { setting: 'metrics', of: (c) => c.metrics }, // metrics: its listener is bound, its token and TLS files read, at start
  { setting: 'security', of: (c) => c.security }, // the FIPS checks run at start; passwordHash goes with requireFips
];

/** Nesting the restart-only settings never exceed; deeper values compare as text. */
const MAX_DEPTH = 4;

/** Each restart-only setting `next` changes, leaf by leaf, with both values. */
export function restartOnlyChanges(running: GatewayConfig, next: GatewayConfig): RestartOnlyChange[] {
  const changes: RestartOnlyChange[] = [];
  for (const { setting, of } of RESTART_ONLY) diffLeaves(of(running), of(next), setting, 0, changes);
  return changes;
}

/** `next` with the running values of the restart-only settings: what the gateway really uses after a reload. */
export function keepRestartOnly(running: GatewayConfig, next: GatewayConfig): GatewayConfig {
  return {
    ...next,
    listen: running.listen,
    dataDir: running.dataDir,
    admin: { ...running.admin, oidc: next.admin.oidc },
    state: running.state,
    limits: { ...next.limits, maxHeaderBytes: running.limits.maxHeaderBytes },
    telemetry: running.telemetry,
    audit: running.audit,
    responses: running.responses,
    metrics: running.metrics,
    security: running.security,
  };
}

function diffLeaves(a: unknown, b: unknown, at: string, depth: number, out: RestartOnlyChange[]): void {
  if (isRecord(a) && isRecord(b) && depth < MAX_DEPTH) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) diffLeaves(a[key], b[key], `${at}.${key}`, depth + 1, out);
    return;
  }
  if (isRecord(a) || isRecord(b) || depth >= MAX_DEPTH) {
    // An object replaced by null (admin.tls, state.redis) or the reverse.
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ setting: at, running: summarize(a), configured: summarize(b) });
    return;
  }
  // Arrays (admin.allowedHosts) compare by content.
  const differs = Array.isArray(a) || Array.isArray(b) ? JSON.stringify(a) !== JSON.stringify(b) : a !== b;
  if (differs) out.push({ setting: at, running: leaf(a), configured: leaf(b) });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function leaf(v: unknown): SettingValue {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return JSON.stringify(v);
}

/** An object side of a change (admin.tls set or removed) is named, not dumped. */
function summarize(v: unknown): SettingValue {
  return isRecord(v) ? '(set)' : leaf(v);
}
