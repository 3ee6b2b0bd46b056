// The egress guard on a routed request, for every door (../guard/body-guard.ts
// does the scanning): the policy is the request's alias's and its key's
// (../guard/guard-policy.ts); a finding to block is the client's 400 naming
// the detector and the path, never the text; masked values are replaced in
// the body, which the door validates again; every finding goes on the access
// line, the metrics and the trace. Fail closed: a fault inside the guard is a
// 500 of its own, and the text is never sent unexamined. A configuration that
// turns the guard on nowhere (no top-level, alias or key policy) costs a
// request one property read.
import type { GatewayConfig } from '../config/config.ts';
import { ApiError, InvalidRequestError } from '../errors/api-error.ts';
import { describeFindings, guardBody, type GuardOutcome } from '../guard/body-guard.ts';
import { effectiveGuardPolicy, type KeyGuard } from '../guard/guard-policy.ts';
import { createGuardScanner, DETECTOR_NAMES, type GuardScanner } from '../guard/guard-types.ts';
import type { LogFields, Logger } from '../log/logger.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import type { ChatTrace } from '../telemetry/chat-trace.ts';
import type { Call } from './call.ts';
import type { KeyPolicy } from './key-policy.ts';

/** Where a request's findings are told: its access line, and the process's metrics, logger and trace. */
export interface GuardSinks {
  readonly log: LogFields;
  readonly requestId: string;
  readonly logger: Logger;
  readonly metrics?: GatewayMetrics | undefined;
  readonly trace?: ChatTrace | undefined;
  /** The request's findings counted by action, for its key's usage. */
  readonly tally?: GuardTally | undefined;
}

/** A request's findings by action (`off` findings are not findings). */
export interface GuardTally {
  blocked: number;
  masked: number;
  logged: number;
}

export interface RequestGuard {
  /** False when neither the config nor the key sets a policy: the request is not inspected at all. */
  needed(key: KeyPolicy): boolean;
  /** The body to send on: `body` itself, or a copy with masked values. Throws guard_blocked (400) or guard_failed (500). */
  inspect(sinks: GuardSinks, body: unknown, alias: string, key: KeyPolicy): unknown;
}

/** The sinks of a call of the pipeline. */
export function callSinks(call: Call): GuardSinks {
  return { log: call.ctx.log, requestId: call.requestId, logger: call.deps.logger, metrics: call.deps.metrics, trace: call.trace, tally: (call.guardTally ??= { blocked: 0, masked: 0, logged: 0 }) };
}

/** Makes the scanner once per configuration, with every detector and pattern any policy may ask for
 * (`scanner`: another one, for a test of what a scanner fault does). */
export function createRequestGuard(config: GatewayConfig, scanner: GuardScanner = createGuardScanner(guardScannerOptions(config))): RequestGuard {
  // No policy in the config: only a key's own can turn the guard on.
  const configured = config.guard !== null || Object.values(config.aliases).some((a) => a.guard !== null);
  return {
    needed: (key) => configured || keyGuardOf(key) !== null,
    inspect(sinks, body, alias, key) {
      const keyGuard = keyGuardOf(key);
      if (!configured && keyGuard === null) return body;
      const policy = effectiveGuardPolicy(config.guard, config.aliases[alias]?.guard ?? null, keyGuard);
      if (!policy.active) return body;
      const outcome = inspectClosed(body, scanner, policy, sinks);
      note(sinks, outcome);
      if (outcome.blocked !== null) {
        const { detector, path } = outcome.blocked;
        throw new InvalidRequestError(
          `The request was refused by the gateway's egress guard: ${detector} found in ${path}. Remove it from the request, or ask the gateway's operator about the guard's policy for this key and model.`,
          path,
          'guard_blocked',
        );
      }
      return outcome.masked ?? body;
    },
  };
}

function keyGuardOf(key: KeyPolicy): KeyGuard | null {
  return (key as KeyPolicy & { readonly guard?: KeyGuard | null }).guard ?? null;
}

/** Every detector (a key's policy may turn on any of them) and the config's operator patterns, compiled when the config was read. */
function guardScannerOptions(config: GatewayConfig): Parameters<typeof createGuardScanner>[0] {
  return { detectors: new Set(DETECTOR_NAMES), patterns: config.guard?.patterns.map((p) => p.compiled) ?? [] };
}

function inspectClosed(body: unknown, scanner: GuardScanner, policy: Parameters<typeof guardBody>[2], sinks: GuardSinks): GuardOutcome {
  try {
    return guardBody(body, scanner, policy);
  } catch (error) {
    // Never the text: the error's name only.
    sinks.logger.error('the egress guard failed; the request was refused', { requestId: sinks.requestId, error: error instanceof Error ? error.name : typeof error });
    throw new ApiError('guard_failed', 'The gateway could not examine this request for secrets and personal data, so it was not sent. Retry it; if it fails again, tell the gateway operator the request id.');
  }
}

function note(sinks: GuardSinks, outcome: GuardOutcome): void {
  if (outcome.findings.length === 0) return;
  sinks.log['guard'] = describeFindings(outcome.findings);
  const tally = sinks.tally;
  for (const finding of outcome.findings) {
    sinks.metrics?.guardFinding(finding.detector, finding.action);
    if (tally === undefined) continue;
    if (finding.action === 'block') tally.blocked++;
    else if (finding.action === 'mask') tally.masked++;
    else if (finding.action === 'log') tally.logged++;
  }
  sinks.trace?.guardFindings(outcome.findings);
}
