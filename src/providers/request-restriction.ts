// One kind of request a provider type's adapter refuses that another type
// takes, as check-config lists it (./request-restrictions.ts).
import type { RequestFieldName } from '../config/request-fields-config.ts';

export interface RequestRestriction {
  /** What is refused, as check-config words it. */
  readonly rule: string;
  /** The request fields beyond the contract's table it is about: it matters only on an alias that accepts one of them. Empty: any request. */
  readonly fields: readonly RequestFieldName[];
}
