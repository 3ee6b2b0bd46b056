// The public port types (src/api/keys.ts, limits.ts, ports.ts) and the internal ones they stand for,
// held together at compile time in both directions: a built-in adapter is a valid
// public port (so the contract suites run against it), and a host's port is
// usable where the gateway takes the internal one. A change to either side that
// breaks this fails the typecheck here, not in a host's build.
import type * as Keys from '../api/keys.ts';
import type * as Limits from '../api/limits.ts';
import type * as Public from '../api/ports.ts';
import type { AuditRecord } from '../audit/audit-record.ts';
import type { KeyGuard } from '../guard/guard-policy.ts';
import type { KeyLimits } from '../limits/key-limits.ts';
import type { Limiter } from '../limits/limiter.ts';
import type { Logger } from '../log/logger.ts';
import type { KeyRecord, KeyStore } from '../state/key-store-port.ts';
import type { UsageStore } from '../state/usage-store-port.ts';
import type { SpanRecord } from '../telemetry/span.ts';

/** Compiles only when `From` is assignable to `To`. */
type Assignable<From extends To, To> = [From, To];

export type PortChecks = [
  Assignable<KeyStore, Keys.KeyStore>,
  Assignable<Keys.KeyStore, KeyStore>,
  Assignable<KeyRecord, Keys.KeyRecord>,
  Assignable<Keys.KeyRecord, KeyRecord>,
  Assignable<KeyLimits, Keys.KeyLimits>,
  Assignable<Keys.KeyLimits, KeyLimits>,
  Assignable<KeyGuard, Keys.KeyGuard>,
  Assignable<Keys.KeyGuard, KeyGuard>,
  Assignable<UsageStore, Limits.UsageStore>,
  Assignable<Limits.UsageStore, UsageStore>,
  Assignable<Limiter, Limits.Limiter>,
  Assignable<Limits.Limiter, Limiter>,
  Assignable<Logger, Public.Logger>,
  Assignable<Public.Logger, Logger>,
  Assignable<AuditRecord, Public.AuditRecord>,
  Assignable<SpanRecord, Public.SpanData>,
];
