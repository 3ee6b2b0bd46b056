// What a failed exchange (./upstream-exchange.ts) means: the client's error
// (./upstream-errors.ts) and, beside it, what went wrong on the wire for the
// operator (./failure-cause.ts). Pure over what the exchange knows: which of
// its own clocks aborted, how far it got, the upstream's status and the
// error the transport threw.

import { ApiError } from '../errors/api-error.ts';
import { EventStreamError } from '../sse/event-stream-parser.ts';
import type { ExchangeSettings } from './exchange-settings.ts';
import { classifyNetworkError, failureCauseOf, FailureKind, noteFailureCause, TimeoutPhase, upstreamAddress, type FailureCause } from './failure-cause.ts';
import {
  badUpstreamResponseError,
  ClientAbortError,
  isClientAbort,
  isNetworkTimeout,
  upstreamConnectionLostError,
  upstreamConnectTimeoutError,
  upstreamProxyFailedError,
  upstreamStalledError,
  upstreamStreamStalledError,
  upstreamStreamTruncatedError,
  upstreamTimeoutError,
  upstreamTlsFailedError,
  upstreamUnreachableError,
} from './upstream-errors.ts';

/** Why the exchange's own controller aborted the request. */
export const Abort = {
  None: 'none',
  Client: 'client',
  ConnectTimeout: 'connect_timeout',
  FirstByteTimeout: 'first_byte_timeout',
  IdleTimeout: 'idle_timeout',
  TotalTimeout: 'total_timeout',
  Closed: 'closed',
} as const;
export type Abort = (typeof Abort)[keyof typeof Abort];

export const Phase = {
  /** Until the response headers arrive. */
  Connecting: 'connecting',
  /** Reading the body. */
  Reading: 'reading',
} as const;
export type Phase = (typeof Phase)[keyof typeof Phase];

/** The clock behind each of our own timeout aborts, for the operator's failure cause. */
const TIMEOUT_PHASE: Partial<Record<Abort, TimeoutPhase>> = {
  [Abort.ConnectTimeout]: TimeoutPhase.Connect,
  [Abort.FirstByteTimeout]: TimeoutPhase.FirstByte,
  [Abort.IdleTimeout]: TimeoutPhase.Idle,
  [Abort.TotalTimeout]: TimeoutPhase.Total,
};

export interface ExchangeState {
  abort: Abort;
  phase: Phase;
  /** The upstream's non-2xx status, when it answered with one. */
  failedStatus: number | undefined;
  streaming: boolean;
  settings: Pick<ExchangeSettings, 'endpoint' | 'connectTimeoutMs' | 'firstByteTimeoutMs' | 'idleTimeoutMs' | 'timeoutMs'>;
  /** The caller's signal's reason, for a ClientAbortError. */
  callerReason: unknown;
}

/** The client's error for `error`, with its wire cause noted beside it. */
export function explainExchangeFailure(error: unknown, state: ExchangeState): unknown {
  const explained = explainForClient(error, state);
  if (!isClientAbort(explained)) {
    noteFailureCause(explained, { ...wireCause(error, explained, state), address: upstreamAddress(state.settings.endpoint) });
  }
  return explained;
}

/** The error for one of the exchange's own aborts; undefined for none. */
export function abortError(state: Pick<ExchangeState, 'abort' | 'settings' | 'callerReason'>): unknown {
  const { settings } = state;
  switch (state.abort) {
    case Abort.Client:
      return new ClientAbortError(state.callerReason);
    case Abort.ConnectTimeout:
      return upstreamConnectTimeoutError(settings.connectTimeoutMs ?? 0);
    case Abort.FirstByteTimeout:
      return upstreamTimeoutError(settings.firstByteTimeoutMs, 'response headers');
    case Abort.IdleTimeout:
      return upstreamStreamStalledError(settings.idleTimeoutMs);
    case Abort.TotalTimeout:
      return upstreamTimeoutError(settings.timeoutMs, 'the whole response');
    default:
      return undefined;
  }
}

/** Most specific first: our own clock, the upstream's status, the socket's
 * code, then what the adapter that threw already knew (an error event). */
function wireCause(error: unknown, explained: unknown, state: ExchangeState): Pick<FailureCause, 'kind' | 'detail'> {
  const phase = TIMEOUT_PHASE[state.abort];
  if (phase !== undefined) return { kind: FailureKind.Timeout, detail: phase };
  if (state.failedStatus !== undefined) return { kind: FailureKind.Http, detail: String(state.failedStatus) };
  const network = classifyNetworkError(error);
  if (network !== undefined) return network;
  const known = failureCauseOf(explained);
  if (known.kind !== FailureKind.Other) return known;
  // Not JSON, an oversized event, a stream that ended without [DONE].
  if (explained instanceof ApiError && (explained.code === 'bad_upstream_response' || explained.code === 'upstream_stream_truncated')) {
    return { kind: FailureKind.BadResponse, detail: explained.code };
  }
  return known;
}

function explainForClient(error: unknown, state: ExchangeState): unknown {
  // Our own abort came first; whatever the transport or the body threw is its echo.
  const aborted = abortError(state);
  if (aborted !== undefined) return aborted;
  if (error instanceof ApiError) return error;
  if (state.phase === Phase.Connecting) {
    // Before the answer: a proxy that would not connect, or a handshake that
    // failed, are the deployment's to fix, and say so.
    const network = classifyNetworkError(error);
    if (network?.kind === FailureKind.Proxy) return upstreamProxyFailedError(error);
    if (network?.kind === FailureKind.Tls) return upstreamTlsFailedError(error);
  }
  // fetch has its own clocks (undici: 300 s for headers and between body
  // chunks, 10 s to connect); running into one is still a timeout.
  if (isNetworkTimeout(error)) return upstreamStalledError(error);
  if (error instanceof EventStreamError) {
    return badUpstreamResponseError('The upstream provider sent a stream event larger than the gateway accepts.', error);
  }
  if (state.phase === Phase.Connecting) return upstreamUnreachableError(error);
  return state.streaming ? upstreamStreamTruncatedError(error) : upstreamConnectionLostError(error);
}
