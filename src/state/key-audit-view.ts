// What an audit record holds of a key (its `before` and `after`): the
// non-secret fields only, built field by field. The raw key and its hash
// never reach the trail.
import type { AuditValue } from '../audit/audit-event.ts';
import { keyStatus } from '../keys/key-settings.ts';
import type { KeyLimits } from '../limits/key-limits.ts';
import type { KeyRecord } from './key-store-port.ts';

export type AuditFields = { readonly [field: string]: AuditValue };

function limitsValue(limits: KeyLimits): AuditFields {
  const { tokenBudget, costBudget } = limits;
  return {
    requestsPerMinute: limits.requestsPerMinute,
    tokensPerMinute: limits.tokensPerMinute,
    concurrentRequests: limits.concurrentRequests,
    tokenBudget: tokenBudget === null ? null : { tokens: tokenBudget.tokens, period: tokenBudget.period },
    costBudget: costBudget === null ? null : { amount: costBudget.amount, period: costBudget.period },
  };
}

/**
 * The non-secret view of a key that audit records carry as before/after:
 * {id, name, prefix, status, expiresAt, allowedAliases, limits, guard,
 * revokedAt, rotatedAt}. Built field by field, so nothing else (the hash, last use) can
 * slip in. `status` is judged at `nowMs`.
 */
export function auditKeyView(record: KeyRecord, nowMs: number = Date.now()): AuditFields {
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    status: keyStatus(record, nowMs),
    expiresAt: record.expiresAt,
    allowedAliases: record.allowedAliases === null ? null : [...record.allowedAliases],
    limits: limitsValue(record.limits),
    guard: record.guard === null ? null : { detectors: { ...record.guard.detectors } },
    revokedAt: record.revokedAt,
    rotatedAt: record.rotatedAt,
  };
}
