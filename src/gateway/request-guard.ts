// The egress guard on a routed request, for every door (../guard/body-guard.ts
// does the scanning): the policy is the request's alias's and its key's
// (../guard/guard-policy.ts); a finding to block is the client's 400 naming
// the detector and the path, never the text; masked values are replaced in
// the body, which the door validates again; every finding goes on the access
// line, the metrics and the trace. Fail closed: a fault inside the guard is a
// 500 of its own, and the text is never sent unexamined. A configuration that
// turns the guard on nowhere (no top-level, alias or key policy) costs a
// request one property read.
//
// The answer's guard (../guard/answer-guard.ts) is made here too, under the
// same policy, with the request's placeholder book: its findings go to the
// same sinks, and a fault inside it is guard_failed as well (the text it was
// given never goes out).
import type { GatewayConfig } from '../config/config.ts';
import { ApiError, InvalidRequestError } from '../errors/api-error.ts';
import { createAnswerGuard, type AnswerChannel, type AnswerGuard, type ChannelKind, type PlaceholderBook } from '../guard/answer-guard.ts';
import { describeFindings, guardBody, type GuardFinding, type GuardOutcome } from '../guard/body-guard.ts';
import { effectiveAnswerSettings, effectiveGuardPolicy, type KeyGuard } from '../guard/guard-policy.ts';
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
  /** The body to send on: `body` itself, or a copy with masked values (their placeholders in `book`, when given). Throws guard_blocked (400) or guard_failed (500). */
  inspect(sinks: GuardSinks, body: unknown, alias: string, key: KeyPolicy, book?: PlaceholderBook): unknown;
  /** The guard of the answer to a request inspect() passed with `book`; null when there is nothing to do for it (no
   * scanning, and no restoration or nothing masked). A fault inside it throws guard_failed (500), logged by name. */
  answers(sinks: GuardSinks, alias: string, key: KeyPolicy, book: PlaceholderBook): AnswerGuard | null;
  /** True when the guard watches a request to `alias` with `key`: a policy for the request is active, or its answer is scanned.
   * What such a request's errors say of the answer then names no value of it (the guard would have judged that value). */
  watches(alias: string, key: KeyPolicy): boolean;
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
    inspect(sinks, body, alias, key, book) {
      const keyGuard = keyGuardOf(key);
      if (!configured && keyGuard === null) return body;
      const policy = effectiveGuardPolicy(config.guard, config.aliases[alias]?.guard ?? null, keyGuard);
      if (!policy.active) return body;
      const outcome = inspectClosed(body, scanner, policy, sinks, book);
      note(sinks, outcome);
      if (outcome.blocked !== null) throw refusal(outcome.blocked);
      return outcome.masked ?? body;
    },
    answers(sinks, alias, key, book) {
      const keyGuard = keyGuardOf(key);
      if (!configured && keyGuard === null) return null;
      const aliasGuard = config.aliases[alias]?.guard ?? null;
      const settings = effectiveAnswerSettings(config.guard, aliasGuard);
      if (!settings.scan && !settings.restore) return null;
      const policy = effectiveGuardPolicy(config.guard, aliasGuard, keyGuard);
      if (!(settings.scan && policy.active) && !(settings.restore && book.hasRestorable)) return null;
      return new ClosedAnswerGuard(createAnswerGuard({ scanner, policy, settings, book }), sinks, settings.scan && policy.active);
    },
    watches(alias, key) {
      const keyGuard = keyGuardOf(key);
      if (!configured && keyGuard === null) return false;
      const aliasGuard = config.aliases[alias]?.guard ?? null;
      return effectiveGuardPolicy(config.guard, aliasGuard, keyGuard).active || effectiveAnswerSettings(config.guard, aliasGuard).scan;
    },
  };
}

/** An answer's findings, after the request's: the access line's `guard` field gets them appended; metrics, tally and trace as for the request. */
export function noteAnswerFindings(sinks: GuardSinks, findings: readonly GuardFinding[]): void {
  if (findings.length === 0) return;
  describeOnLine(sinks.log, findings);
  count(sinks, findings);
}

/** The access line's `guard` field lists this many findings at most (the request's, then the answer's), then one count of the rest. */
const MAX_LOGGED_FINDINGS = 16;

/** What a line's `guard` field lists so far: its findings described, how many, and how many more there were. */
interface LineFindings {
  listed: string;
  shown: number;
  more: number;
}

/** Per access line, what its `guard` field holds: findings come in several turns (the request's, the answer's drains). */
const lineFindings = new WeakMap<LogFields, LineFindings>();

/** Adds findings to the line's `guard` field: up to MAX_LOGGED_FINDINGS in all, then one `+N more`, at the end. */
function describeOnLine(log: LogFields, findings: readonly GuardFinding[]): void {
  let state = lineFindings.get(log);
  if (state === undefined) {
    state = readLine(log['guard']);
    lineFindings.set(log, state);
  }
  const room = Math.max(0, MAX_LOGGED_FINDINGS - state.shown);
  const taken = Math.min(room, findings.length);
  if (taken > 0) {
    const described = describeFindings(findings.slice(0, taken), taken);
    state.listed = state.listed === '' ? described : `${state.listed},${described}`;
    state.shown += taken;
  }
  state.more += findings.length - taken;
  log['guard'] = state.more === 0 ? state.listed : state.listed === '' ? `+${state.more} more` : `${state.listed},+${state.more} more`;
}

/** A `guard` field this module did not write: its entries counted by their commas (a path with a comma in a key counts twice: fewer shown, never more). */
function readLine(field: LogFields[string] | undefined): LineFindings {
  if (typeof field !== 'string' || field === '') return { listed: '', shown: 0, more: 0 };
  const count = /(?:^|,)\+(\d+) more$/.exec(field);
  const listed = count === null ? field : field.slice(0, count.index);
  return { listed, shown: listed === '' ? 0 : listed.split(',').length, more: count === null ? 0 : Number(count[1]) };
}

/** The client's 400 for a blocked finding: the detector and the path, never the text. */
function refusal(blocked: GuardFinding): InvalidRequestError {
  const { detector, path } = blocked;
  // A value the policy masks, in a signed thinking text: masking it would break the signature the upstream checks.
  const message = blocked.reason === 'signed'
    ? `The request was refused by the gateway's egress guard: ${detector} found in ${path}, a thinking block, which cannot be masked without breaking its signature. Remove that thinking block (or the turn it is in) from the request, or ask the gateway's operator about the guard's policy for this key and model.`
    : `The request was refused by the gateway's egress guard: ${detector} found in ${path}. Remove it from the request, or ask the gateway's operator about the guard's policy for this key and model.`;
  return new InvalidRequestError(message, path, 'guard_blocked');
}

function keyGuardOf(key: KeyPolicy): KeyGuard | null {
  return key.guard ?? null;
}

/** Every detector (a key's policy may turn on any of them) and the config's operator patterns, compiled when the config was read. */
function guardScannerOptions(config: GatewayConfig): Parameters<typeof createGuardScanner>[0] {
  return { detectors: new Set(DETECTOR_NAMES), patterns: config.guard?.patterns.map((p) => p.compiled) ?? [] };
}

function inspectClosed(body: unknown, scanner: GuardScanner, policy: Parameters<typeof guardBody>[2], sinks: GuardSinks, book: PlaceholderBook | undefined): GuardOutcome {
  try {
    return book === undefined ? guardBody(body, scanner, policy) : guardBody(body, scanner, policy, book);
  } catch (error) {
    // Never the text: the error's name only.
    sinks.logger.error('the egress guard failed; the request was refused', { requestId: sinks.requestId, error: error instanceof Error ? error.name : typeof error });
    throw new ApiError('guard_failed', 'The gateway could not examine this request for secrets and personal data, so it was not sent. Retry it; if it fails again, tell the gateway operator the request id.');
  }
}

function note(sinks: GuardSinks, outcome: GuardOutcome): void {
  if (outcome.findings.length === 0) return;
  // The request's findings come first: the line's list starts with them.
  lineFindings.set(sinks.log, { listed: '', shown: 0, more: 0 });
  describeOnLine(sinks.log, outcome.findings);
  count(sinks, outcome.findings);
}

function count(sinks: GuardSinks, findings: readonly GuardFinding[]): void {
  const tally = sinks.tally;
  for (const finding of findings) {
    sinks.metrics?.guardFinding(finding.detector, finding.action);
    if (tally === undefined) continue;
    if (finding.action === 'block') tally.blocked++;
    else if (finding.action === 'mask') tally.masked++;
    else if (finding.action === 'log') tally.logged++;
  }
  sinks.trace?.guardFindings(findings);
}

const ANSWER_GUARD_FAILED = 'The gateway could not examine the answer for secrets and personal data, so the rest of it was not sent. Retry the request; if it fails again, tell the gateway operator the request id.';

/** Fail closed: a throw inside the answer's guard is guard_failed, the error logged by its name (never the text). */
function answerGuardFailed(sinks: GuardSinks, error: unknown): ApiError {
  if (error instanceof ApiError && error.code === 'guard_failed') return error;
  sinks.logger.error('the egress guard failed on an answer; the answer was cut', { requestId: sinks.requestId, error: error instanceof Error ? error.name : typeof error });
  return new ApiError('guard_failed', ANSWER_GUARD_FAILED);
}

class ClosedAnswerGuard implements AnswerGuard {
  readonly #inner: AnswerGuard;
  readonly #sinks: GuardSinks;
  /** The answer is scanned (not only restored): the chat shapes drop its log probabilities (./answer-chunk-guard.ts). */
  readonly scanning: boolean;

  constructor(inner: AnswerGuard, sinks: GuardSinks, scanning: boolean) {
    this.#inner = inner;
    this.#sinks = sinks;
    this.scanning = scanning;
  }

  channel(path: string, kind: ChannelKind): AnswerChannel {
    try {
      return new ClosedChannel(this.#inner.channel(path, kind), this.#sinks);
    } catch (error) {
      throw answerGuardFailed(this.#sinks, error);
    }
  }

  whole(path: string, kind: ChannelKind, text: string): { readonly text: string; readonly blocked: boolean } {
    try {
      return this.#inner.whole(path, kind, text);
    } catch (error) {
      throw answerGuardFailed(this.#sinks, error);
    }
  }

  drain(): GuardFinding[] {
    return this.#inner.drain();
  }
}

class ClosedChannel implements AnswerChannel {
  readonly #inner: AnswerChannel;
  readonly #sinks: GuardSinks;

  constructor(inner: AnswerChannel, sinks: GuardSinks) {
    this.#inner = inner;
    this.#sinks = sinks;
  }

  get blocked(): boolean {
    return this.#inner.blocked;
  }

  push(text: string): string {
    try {
      return this.#inner.push(text);
    } catch (error) {
      throw answerGuardFailed(this.#sinks, error);
    }
  }

  end(): string {
    try {
      return this.#inner.end();
    } catch (error) {
      throw answerGuardFailed(this.#sinks, error);
    }
  }
}
