// What the limiter scenario tables share (limiter-scenarios.ts, limiter-budget-scenarios.ts):
// a limiter per scenario with key ids unique to the run, and helpers that take a bare
// number of tokens where a Charge is expected (cost 0), so the token cases read short.
//
// For an implementation with shared, persistent state (Redis): every scenario uses key
// ids unique to this run, and the times are fixed dates in 2026-2028, so TTLs must be
// relative to nowMs (PEXPIRE), never absolute (EXPIREAT). Leases use DEFAULT_LEASE_MS.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { NO_LIMITS } from '../limits/key-limits.ts';
import type { KeyLimits } from '../api/keys.ts';
import type { AdmitDecision, Charge, Limiter, Permit } from '../api/limits.ts';
import type { MakeLimiter } from './limiter-contract.ts';

// Declared beside runLimiterContract, so the public declarations end there and
// this file's helpers stay out of them.
export type { MakeLimiter };

export const T0 = Date.UTC(2026, 10, 22, 12, 0, 0); // 2026-11-22T12:00:00.000Z
export const at = (iso: string): number => Date.parse(iso);
export const limits = (set: Partial<KeyLimits>): KeyLimits => ({ ...NO_LIMITS, ...set });

/** Tokens alone (no cost), or a whole charge. */
export type Amount = number | Charge;
export const chargeOf = (amount: Amount): Charge => (typeof amount === 'number' ? { tokens: amount, costNanos: 0 } : amount);

export type Refused = Extract<AdmitDecision, { allowed: false }>;

export function allowed(decision: AdmitDecision): Extract<AdmitDecision, { allowed: true }> {
  assert.equal(decision.allowed, true, `expected an admission, got ${JSON.stringify(decision)}`);
  return decision as Extract<AdmitDecision, { allowed: true }>;
}

export function refused(decision: AdmitDecision): Refused {
  assert.equal(decision.allowed, false, `expected a refusal, got ${JSON.stringify(decision)}`);
  return decision as Refused;
}

/** A test body run on a fresh limiter, closed at the end. */
export function scenarioRunner(makeLimiter: MakeLimiter) {
  return (body: (s: Scenario) => Promise<void>) => async (): Promise<void> => {
    const limiter = await makeLimiter();
    try {
      await body(new Scenario(limiter));
    } finally {
      await limiter.close();
    }
  };
}

export class Scenario {
  readonly limiter: Limiter;
  readonly run = randomUUID().slice(0, 8);
  constructor(limiter: Limiter) {
    this.limiter = limiter;
  }
  key(name: string): string {
    return `key_${this.run}_${name}`;
  }
  admit(key: string, l: KeyLimits, reservation: Amount, nowMs: number): Promise<AdmitDecision> {
    return this.limiter.admit({ keyId: this.key(key), limits: l, reservation: chargeOf(reservation), nowMs });
  }
  async permit(key: string, l: KeyLimits, reservation: Amount, nowMs: number): Promise<Permit> {
    return allowed(await this.admit(key, l, reservation, nowMs)).permit;
  }
  /** `maxChargeMultiple` as SettleInput's: absent for the limiter's default ceiling. */
  settle(permit: Permit, l: KeyLimits, charge: Amount, nowMs: number, maxChargeMultiple?: number | null): Promise<void> {
    return this.limiter.settle({ permit, limits: l, charge: chargeOf(charge), nowMs, ...(maxChargeMultiple === undefined ? {} : { maxChargeMultiple }) });
  }
  renew(permit: Permit, nowMs: number): Promise<boolean> {
    return this.limiter.renew(permit, nowMs);
  }
  used(key: string, l: KeyLimits, nowMs: number): Promise<{ tokens: number; costNanos: number }> {
    return this.limiter.budgetUsed(this.key(key), l, nowMs);
  }
  /** The token budget's count alone. */
  async budgetUsed(key: string, l: KeyLimits, nowMs: number): Promise<number> {
    return (await this.used(key, l, nowMs)).tokens;
  }
}
