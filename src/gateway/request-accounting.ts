// One authenticated chat request's accounting, from admission to close: its
// reservation, its permit (held alive by the permit keeper while it runs), how
// far it got, and at close the one charge (request-charge.ts) that both the
// key's usage record and the limiter's settlement take, so they never disagree,
// except that the limiter counts it at most limits.maxChargeMultiple times the
// reservation (src/limits/charge-ceiling.ts), which is warned of and counted.
import type { ChunkRelay } from '../chat/stream-relay.ts';
import type { Usage } from '../chat/types.ts';
import type { Price } from '../config/config.ts';
import type { RequestContext } from '../http/request-context.ts';
import { countedCharge } from '../limits/charge-ceiling.ts';
import { amountOf } from '../limits/cost.ts';
import type { Limiter, Permit } from '../limits/limiter.ts';
import type { Reservation } from '../limits/reservation.ts';
import type { Logger } from '../log/logger.ts';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import type { UsageLedger } from '../usage/usage-ledger.ts';
import type { KeyPolicy } from './key-policy.ts';
import type { PermitKeeper } from './permit-keeper.ts';
import { chargeFor, RequestPhase, type RequestCharge } from './request-charge.ts';

export interface AccountingDeps {
  usage: UsageLedger;
  limiter: Limiter;
  permits: PermitKeeper;
  logger: Logger;
  metrics?: GatewayMetrics | undefined;
  clock: () => number;
  /** limits.maxChargeMultiple: the limiter counts a charge at most this many times its reservation. */
  maxChargeMultiple: number;
}

export interface Accounting {
  phase: RequestPhase;
  /** Set once the request is routed; null for a request refused before (nothing to charge). */
  reservation: Reservation | null;
  /** Every target's price, in plan order (null for an unpriced target). */
  prices: readonly (Price | null)[];
  /** Price of the last target tried: the one that answered, or gave an unusable answer. */
  answeredPrice: Price | null;
  /** The upstream's final usage (a whole JSON answer, or a stream's end). */
  usage: Usage | undefined;
  /** The stream relay, for what a cut stream generated and reported so far. */
  relay: Pick<ChunkRelay, 'usage' | 'generatedBytes'> | undefined;
  /** The error a failed upstream call ended with. */
  errorCode: string | undefined;
  /** The upstream's final usage arrived: kept for the charge, and written to the access line at once (traces read it there). */
  noteUsage(usage: Usage): void;
  /** Holds `permit` until the request closes, renewing its lease meanwhile. */
  hold(permit: Permit): void;
  /** Gives an unused permit back at once (the client left while the limiter decided). */
  release(permit: Permit): void;
}

/**
 * Counts the request (every authenticated request, rejected ones as errors),
 * and at close charges it and settles its permit, however it ended.
 */
export function openAccounting(ctx: RequestContext, key: KeyPolicy, deps: AccountingDeps): Accounting {
  const { usage, limiter, permits, logger, metrics, clock, maxChargeMultiple } = deps;
  let permit: Permit | null = null;

  const settle = (held: Permit, charge: Pick<RequestCharge, 'promptTokens' | 'completionTokens' | 'costNanos'>): void => {
    permits.release(held);
    const input = { permit: held, limits: key.limits, charge: { tokens: charge.promptTokens + charge.completionTokens, costNanos: charge.costNanos }, nowMs: clock(), maxChargeMultiple };
    // The permit is given back whatever happens: a failed settlement leaves it to its lease.
    Promise.resolve()
      .then(() => limiter.settle(input))
      .catch((err: unknown) => {
        logger.warn('rate-limit settlement failed; the permit lease will release it', { requestId: ctx.requestId, error: err instanceof Error ? err.name : typeof err });
      });
  };

  const logReported = (u: Usage): void => {
    ctx.log['promptTokens'] = u.prompt_tokens;
    ctx.log['completionTokens'] = u.completion_tokens;
    ctx.log['cachedTokens'] = u.prompt_tokens_details.cached_tokens;
  };

  const accounting: Accounting = {
    phase: RequestPhase.NotSent,
    reservation: null,
    prices: [],
    answeredPrice: null,
    usage: undefined,
    relay: undefined,
    errorCode: undefined,
    noteUsage(u) {
      accounting.usage = u;
      logReported(u);
    },
    hold(held) {
      permit = held;
      permits.hold(held);
    },
    release(held) {
      settle(held, { promptTokens: 0, completionTokens: 0, costNanos: 0 });
    },
  };

  metrics?.requestStarted();
  ctx.onClose(() => {
    metrics?.requestEnded();
    const reservation = accounting.reservation;
    if (reservation === null) {
      usage.record(key.id, { charged: null, error: ctx.res.statusCode >= 400 || ctx.log['error'] !== undefined });
      return;
    }
    // The permit is settled whatever happens below: a throw (a charge the usage ledger
    // refuses, a bug) must not leave it held, and renewed by the permit keeper, forever.
    // Until the charge is known the reservation stands, as for a permit never settled.
    let settleWith: Pick<RequestCharge, 'promptTokens' | 'completionTokens' | 'costNanos'> = {
      promptTokens: reservation.promptTokens,
      completionTokens: reservation.outputTokens,
      costNanos: reservation.costNanos,
    };
    try {
      const charge = decideCharge(reservation);
      settleWith = charge;
      const charged = charge.basis === 'none' ? null : { promptTokens: charge.promptTokens, completionTokens: charge.completionTokens, cachedTokens: charge.cachedTokens, costNanos: charge.costNanos };
      usage.record(key.id, { charged, error: ctx.res.statusCode >= 400 || ctx.log['error'] !== undefined });
    } finally {
      if (permit !== null) settle(permit, settleWith);
    }
  });

  /** The request's one charge, for the key's usage record and the limiter alike; written to the access line. */
  function decideCharge(reservation: Reservation): RequestCharge {
    const reported = accounting.usage ?? accounting.relay?.usage;
    const charge = chargeFor({
      reservation,
      phase: accounting.phase,
      clientLeft: ctx.signal.aborted,
      errorCode: accounting.errorCode ?? (ctx.log['error'] as string | undefined),
      usage: reported,
      generatedBytes: accounting.relay?.generatedBytes ?? 0,
      answeredPrice: accounting.answeredPrice,
      prices: accounting.prices,
    });
    if (reported !== undefined) logReported(reported);
    if (charge.note !== undefined && charge.note.startsWith('usage_bad')) {
      // Not believed, so not counted as reported either (the tokens metric reads these fields); the warning below names the problem.
      ctx.log['promptTokens'] = null;
      ctx.log['completionTokens'] = null;
      ctx.log['cachedTokens'] = null;
    }
    ctx.log['charge'] = charge.basis;
    ctx.log['chargedTokens'] = charge.promptTokens + charge.completionTokens;
    ctx.log['costNanos'] = charge.costNanos;
    ctx.log['cost'] = amountOf(charge.costNanos);
    if (charge.note !== undefined && charge.note !== 'usage_missing') {
      logger.warn('the upstream reported usage the gateway cannot charge; the reservation was charged instead', {
        requestId: ctx.requestId,
        keyId: key.id,
        target: ctx.log['target'] ?? null,
        problem: charge.note,
      });
    }
    const chargedTokens = charge.promptTokens + charge.completionTokens;
    const counted = countedCharge(reservation, { tokens: chargedTokens, costNanos: charge.costNanos }, maxChargeMultiple);
    if (counted.tokens !== chargedTokens || counted.costNanos !== charge.costNanos) {
      // One answer must not spend a budget faster than the admissions allowed: the limiter counts the ceiling (it applies the same rule).
      metrics?.chargeClamped((ctx.log['alias'] as string | null | undefined) ?? null);
      logger.warn('an upstream reported more than limits.maxChargeMultiple times the reservation; the key limits count the ceiling, its usage what was reported', {
        requestId: ctx.requestId,
        keyId: key.id,
        alias: ctx.log['alias'] ?? null,
        target: ctx.log['target'] ?? null,
        reserved: reservation.tokens,
        reported: chargedTokens,
        counted: counted.tokens,
        reservedCostNanos: reservation.costNanos,
        reportedCostNanos: charge.costNanos,
        countedCostNanos: counted.costNanos,
        maxChargeMultiple,
      });
    } else if (reported !== undefined && charge.basis === 'usage' && chargedTokens > reservation.tokens) {
      // The bound failed (an image above imageTokens, a provider's hidden prompt): the limits hold one request less tightly.
      logger.warn('a request used more tokens than its reservation; raise the alias imageTokens if it carried images', {
        requestId: ctx.requestId,
        alias: ctx.log['alias'] ?? null,
        reserved: reservation.tokens,
        charged: charge.promptTokens + charge.completionTokens,
      });
    }
    return charge;
  }
  return accounting;
}
