// The "audit" section: how the audit chain's file in the
// data directory rotates (docs/config.md, "Audit"; docs/audit.md). The Redis
// chain does not rotate.
import type { Checker } from './config-checker.ts';

export interface AuditConfig {
  /** audit.jsonl is renamed to audit.<first seq>.jsonl before a record would take it past this many bytes. */
  rotateBytes: number;
}

export const DEFAULT_AUDIT_ROTATE_BYTES = 64 * 1024 * 1024;
export const MIN_AUDIT_ROTATE_BYTES = 64 * 1024;
/** 1 TiB: beyond any real file, below 2^53. */
const MAX_AUDIT_ROTATE_BYTES = 1024 ** 4;

export const DEFAULT_AUDIT: AuditConfig = { rotateBytes: DEFAULT_AUDIT_ROTATE_BYTES };

export function parseAudit(c: Checker, value: unknown): AuditConfig {
  if (value === undefined) return { ...DEFAULT_AUDIT };
  const o = c.object(value, 'audit', ['rotateBytes']);
  if (o === undefined) return { ...DEFAULT_AUDIT };
  const rotateBytes = c.optional(o, 'rotateBytes', 'audit', DEFAULT_AUDIT_ROTATE_BYTES, (v, at) => {
    if (typeof v === 'number' && Number.isInteger(v) && v >= MIN_AUDIT_ROTATE_BYTES && v <= MAX_AUDIT_ROTATE_BYTES) return v;
    // A size written as text ("64MiB") or out of range: say the unit and give the default as an example.
    return c.report(at, {
      code: 'invalid_value',
      message: `must be a number of bytes, an integer from ${MIN_AUDIT_ROTATE_BYTES} (64 KiB) to ${MAX_AUDIT_ROTATE_BYTES} (1 TiB), e.g. ${DEFAULT_AUDIT_ROTATE_BYTES} for 64 MiB`,
    });
  });
  return { rotateBytes };
}
