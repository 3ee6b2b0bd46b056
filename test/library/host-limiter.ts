// A limiter as a host writes one, from the public types and the Limiter doc
// comments alone: token buckets refilled continuously, slots held by leases, and
// budget counts per UTC day or month, all in Maps of this process. Every permit of a
// key with a limit holds a lease; those in flight hold slots and budget reservations.
import { randomUUID } from 'node:crypto';
import type { BudgetPeriod, KeyLimits } from '../../src/api/keys.ts';
import type { AdmitDecision, BudgetRefusal, Charge, Limiter, Permit, RateLimitSnapshot } from '../../src/api/limits.ts';

const MINUTE = 60_000;
const NANOS = 1_000_000_000;

interface Bucket {
  level: number;
  atMs: number;
}

interface Held {
  keyId: string;
  expiresAtMs: number;
}

function periodOf(period: BudgetPeriod, nowMs: number): { id: string; endMs: number } {
  const d = new Date(nowMs);
  const [y, m, day] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()];
  return period === 'day'
    ? { id: d.toISOString().slice(0, 10), endMs: Date.UTC(y, m, day + 1) }
    : { id: d.toISOString().slice(0, 7), endMs: Date.UTC(y, m + 1, 1) };
}

export function createHostLimiter(leaseMs = 30_000): Limiter {
  const buckets = new Map<string, Bucket>();
  const budgets = new Map<string, number>();
  const held = new Map<string, Held>();
  const settled = new Set<string>();

  const level = (key: string, limit: number, nowMs: number): Bucket => {
    const bucket = buckets.get(key) ?? { level: limit, atMs: nowMs };
    const elapsed = Math.max(0, nowMs - bucket.atMs);
    return { level: Math.min(limit, bucket.level + (elapsed * limit) / MINUTE), atMs: Math.max(nowMs, bucket.atMs) };
  };
  const window = (bucket: Bucket, limit: number) => ({
    limit,
    remaining: Math.max(0, Math.floor(bucket.level)),
    resetMs: Math.ceil(((limit - bucket.level) * MINUTE) / limit),
  });
  const slotsOf = (keyId: string, nowMs: number): number => {
    let count = 0;
    for (const slot of held.values()) if (slot.keyId === keyId && slot.expiresAtMs > nowMs) count++;
    return count;
  };
  const inFlight = (keyId: string, nowMs: number): boolean => slotsOf(keyId, nowMs) > 0;
  const budgetKey = (keyId: string, kind: 'tokens' | 'cost', id: string): string => `${keyId}|${kind}|${id}`;

  function budgetRefusal(keyId: string, limits: KeyLimits, reservation: Charge, nowMs: number): { budget: BudgetRefusal; retryAfterMs: number | null } | null {
    const checks: { kind: 'tokens' | 'cost'; limit: number; requested: number; period: BudgetPeriod }[] = [];
    if (limits.tokenBudget !== null) checks.push({ kind: 'tokens', limit: limits.tokenBudget.tokens, requested: reservation.tokens, period: limits.tokenBudget.period });
    if (limits.costBudget !== null) checks.push({ kind: 'cost', limit: Math.round(limits.costBudget.amount * NANOS), requested: reservation.costNanos, period: limits.costBudget.period });
    for (const check of checks) {
      const { id, endMs } = periodOf(check.period, nowMs);
      const used = budgets.get(budgetKey(keyId, check.kind, id)) ?? 0;
      if (used + check.requested <= check.limit && used < check.limit) continue;
      const spent = used >= check.limit;
      const cause = check.requested > check.limit ? 'exceeds_budget' : spent ? 'spent' : inFlight(keyId, nowMs) ? 'held_in_flight' : 'too_little_left';
      const retryAfterMs = cause === 'exceeds_budget' ? null : cause === 'held_in_flight' ? 1000 : endMs - nowMs;
      return { budget: { ...check, used, resetsAt: new Date(endMs).toISOString(), spent, cause }, retryAfterMs };
    }
    return null;
  }

  function addToBudgets(permit: Permit, limits: KeyLimits, delta: Charge): void {
    if (limits.tokenBudget !== null && permit.budgetPeriod !== null) {
      const key = budgetKey(permit.keyId, 'tokens', permit.budgetPeriod);
      budgets.set(key, Math.max(0, (budgets.get(key) ?? 0) + delta.tokens));
    }
    if (limits.costBudget !== null && permit.costBudgetPeriod !== null) {
      const key = budgetKey(permit.keyId, 'cost', permit.costBudgetPeriod);
      budgets.set(key, Math.max(0, (budgets.get(key) ?? 0) + delta.costNanos));
    }
  }

  return {
    leaseMs,
    async admit({ keyId, limits, reservation, nowMs }): Promise<AdmitDecision> {
      const snapshot: RateLimitSnapshot = {};
      const waits: { refusal: 'requests' | 'tokens' | 'concurrency'; ms: number }[] = [];
      const rpm = limits.requestsPerMinute;
      const tpm = limits.tokensPerMinute;
      const requests = rpm === null ? null : level(`${keyId}|requests`, rpm, nowMs);
      const tokens = tpm === null ? null : level(`${keyId}|tokens`, tpm, nowMs);
      if (requests !== null && rpm !== null && requests.level < 1) waits.push({ refusal: 'requests', ms: Math.ceil(((1 - requests.level) * MINUTE) / rpm) });
      if (tokens !== null && tpm !== null) {
        const need = Math.min(reservation.tokens, tpm);
        if (tokens.level < need) waits.push({ refusal: 'tokens', ms: Math.ceil(((need - tokens.level) * MINUTE) / tpm) });
      }
      if (limits.concurrentRequests !== null && slotsOf(keyId, nowMs) >= limits.concurrentRequests) waits.push({ refusal: 'concurrency', ms: 1000 });
      const budget = budgetRefusal(keyId, limits, reservation, nowMs);
      if (budget !== null || waits.length > 0) {
        if (requests !== null && rpm !== null) snapshot.requests = window(requests, rpm);
        if (tokens !== null && tpm !== null) snapshot.tokens = window(tokens, tpm);
        if (budget !== null) return { allowed: false, refusal: 'budget', retryAfterMs: budget.retryAfterMs, snapshot, budget: budget.budget };
        const longest = waits.reduce((a, b) => (b.ms > a.ms ? b : a));
        return { allowed: false, refusal: longest.refusal, retryAfterMs: longest.ms, snapshot };
      }
      if (requests !== null && rpm !== null) {
        requests.level -= 1;
        buckets.set(`${keyId}|requests`, requests);
        snapshot.requests = window(requests, rpm);
      }
      if (tokens !== null && tpm !== null) {
        tokens.level -= reservation.tokens;
        buckets.set(`${keyId}|tokens`, tokens);
        snapshot.tokens = window(tokens, tpm);
      }
      const permit: Permit = Object.freeze({
        keyId,
        id: randomUUID(),
        reservation: Object.freeze({ ...reservation }),
        admittedAtMs: nowMs,
        budgetPeriod: limits.tokenBudget === null ? null : periodOf(limits.tokenBudget.period, nowMs).id,
        costBudgetPeriod: limits.costBudget === null ? null : periodOf(limits.costBudget.period, nowMs).id,
      });
      addToBudgets(permit, limits, reservation);
      const limited = Object.values(limits).some((limit) => limit !== null);
      if (limited) held.set(permit.id, { keyId, expiresAtMs: nowMs + leaseMs });
      return { allowed: true, permit, snapshot };
    },

    async settle({ permit, limits, charge, nowMs, maxChargeMultiple }): Promise<void> {
      if (settled.has(permit.id)) return;
      settled.add(permit.id);
      const slot = held.get(permit.id);
      held.delete(permit.id);
      // No lease (a key without limits), or one that ran out: the reservation stays as charged.
      if (slot === undefined || slot.expiresAtMs <= nowMs) return;
      const multiple = maxChargeMultiple === undefined ? 2 : maxChargeMultiple;
      const cap = (value: number, reserved: number): number => (multiple === null ? value : Math.min(value, reserved * multiple));
      const counted = { tokens: cap(charge.tokens, permit.reservation.tokens), costNanos: cap(charge.costNanos, permit.reservation.costNanos) };
      const delta = { tokens: counted.tokens - permit.reservation.tokens, costNanos: counted.costNanos - permit.reservation.costNanos };
      addToBudgets(permit, limits, delta);
      const tpm = limits.tokensPerMinute;
      if (tpm !== null) {
        const bucket = level(`${permit.keyId}|tokens`, tpm, nowMs);
        bucket.level = Math.min(tpm, bucket.level - delta.tokens);
        buckets.set(`${permit.keyId}|tokens`, bucket);
      }
    },

    async renew(permit, nowMs) {
      const slot = held.get(permit.id);
      if (slot === undefined || slot.expiresAtMs <= nowMs) return false;
      slot.expiresAtMs = nowMs + leaseMs;
      return true;
    },

    async budgetUsed(keyId, limits, nowMs) {
      const used = (kind: 'tokens' | 'cost', period: BudgetPeriod | undefined): number =>
        period === undefined ? 0 : (budgets.get(budgetKey(keyId, kind, periodOf(period, nowMs).id)) ?? 0);
      return { tokens: used('tokens', limits.tokenBudget?.period), costNanos: used('cost', limits.costBudget?.period) };
    },

    async close() {},
  };
}
