// The gateway's metrics, one registry per process (kept across reloads), and
// the few hooks the request path calls. Exposed at /metrics on the admin
// listener. Label values are bounded: aliases outside the serving config are
// counted as "_unknown", so a client cannot mint series by inventing names.
import { CLIENT_WRITE_STALLED, type AccessLine } from '../log/access-line.ts';
import type { TargetHealth } from '../routing/alias-targets.ts';
import { createRegistry, type Registry } from './registry.ts';

const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];
const TTFB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
const CIRCUIT_STATES = ['closed', 'half_open', 'open'] as const;
const UNKNOWN_ALIAS = '_unknown';

interface GatewayMetricsSources {
  /** Circuit state of every target of the serving config. */
  targets(): TargetHealth[];
  /** Aliases of the serving config (for label bounding). */
  isKnownAlias(alias: string): boolean;
  /** 1 when the state backend answers, 0 when not. */
  stateBackendUp(): number;
  /** Open client connections per listener ("api", "admin"). */
  openConnections?(): Record<string, number>;
  /** 1 while the process is out of file descriptors. */
  descriptorsExhausted?(): number;
  /** Lookups of keys this instance did not know, in the shared store, by result, since start. */
  keyLookups?(): Readonly<Record<string, number>>;
}

export interface GatewayMetrics {
  readonly registry: Registry;
  /** One finished request, from its access-log line. */
  requestDone(line: AccessLine): void;
  /** The upstream part of a request: its final target and how long dispatch took. */
  upstreamDone(target: string, seconds: number): void;
  /** Each attempt the dispatcher made (ok, retry, fallback, ...). */
  attempt(target: string, outcome: string): void;
  streamStarted(): void;
  streamEnded(): void;
  requestStarted(): void;
  requestEnded(): void;
  rateLimited(alias: string, limit: string): void;
  /** A request whose reported charge was above limits.maxChargeMultiple times its reservation: its key's limits counted the ceiling. */
  chargeClamped(alias: string | null): void;
  stateBackendUnavailable(operation: string): void;
  configReload(result: 'success' | 'failure'): void;
  /** A connection refused beyond limits.maxConnections. */
  connectionRefused(listener: string): void;
  /** A connection without a request in flight closed to make room for a new one (src/http/connection-limit.ts). */
  connectionReclaimed(listener: string): void;
  /** The process ran out of file descriptors (once per exhaustion). */
  descriptorExhaustion(): void;
  /** telemetry: spans the OTLP collector accepted, and spans dropped by reason. */
  traceSpansExported(count: number): void;
  traceSpansDropped(reason: string, count: number): void;
  /** audit: an audit event that could not be appended to the chain (it is in the log stream only). */
  auditAppendFailure(): void;
  /** A write of budgets.json failed (budgeted admissions are refused until one succeeds). */
  budgetJournalWriteFailure(): void;
  /** The egress guard found something in a request: by detector (a bounded set: the config's names) and action. */
  guardFinding(detector: string, action: string): void;
  expose(): string;
}

const COUNT_TOKENS = 'count_tokens';

/** The model doors by path, and their `endpoint` label. */
const MODEL_ENDPOINTS: ReadonlyMap<string, string> = new Map([
  ['/v1/chat/completions', 'chat_completions'],
  ['/v1/messages', 'messages'],
  ['/v1/responses', 'responses'],
  ['/v1/messages/count_tokens', COUNT_TOKENS],
  ['/v1/embeddings', 'embeddings'],
]);

export function createGatewayMetrics(sources: GatewayMetricsSources): GatewayMetrics {
  const registry = createRegistry();
  const requests = registry.counter({ name: 'portcullis_requests_total', help: 'Requests answered, by endpoint (chat_completions, messages, count_tokens, responses, embeddings), alias and HTTP status.', labelNames: ['endpoint', 'alias', 'status'] });
  const duration = registry.histogram({ name: 'portcullis_request_duration_seconds', help: 'Time from request to the end of the answer.', labelNames: ['alias'], buckets: DURATION_BUCKETS });
  const ttfb = registry.histogram({ name: 'portcullis_time_to_first_byte_seconds', help: 'Time from request to the answer headers.', labelNames: ['alias'], buckets: TTFB_BUCKETS });
  const upstream = registry.histogram({ name: 'portcullis_upstream_duration_seconds', help: 'Time spent on the upstream call, retries and fallbacks included, by the target that answered.', labelNames: ['target'], buckets: DURATION_BUCKETS });
  const attempts = registry.counter({ name: 'portcullis_upstream_attempts_total', help: 'Upstream attempts by target and outcome (ok, retry, fallback, ...).', labelNames: ['target', 'outcome'] });
  const tokens = registry.counter({ name: 'portcullis_tokens_total', help: 'Tokens reported by upstreams, by alias and kind.', labelNames: ['alias', 'kind'] });
  const cost = registry.counter({
    name: 'portcullis_cost_nanos_total',
    help: 'What requests were charged, in billionths of the configured currency (prices from the config), by alias and the target that answered ("none" when no target did).',
    labelNames: ['alias', 'target'],
  });
  const inFlight = registry.gauge({ name: 'portcullis_in_flight_requests', help: 'Chat requests being handled now.' });
  const streams = registry.gauge({ name: 'portcullis_in_flight_streams', help: 'Event streams open now.' });
  const limited = registry.counter({ name: 'portcullis_rate_limited_requests_total', help: 'Requests refused by a per-key limit, by alias and limit (requests, tokens, concurrency, budget).', labelNames: ['alias', 'limit'] });
  const clamped = registry.counter({
    name: 'portcullis_charges_clamped_total',
    help: 'Requests whose upstream reported more than limits.maxChargeMultiple times their reservation; the key limits counted the ceiling, the usage record what was reported.',
    labelNames: ['alias'],
  });
  const unavailable = registry.counter({ name: 'portcullis_state_backend_unavailable_total', help: 'Operations that found the shared state backend (Redis) unreachable.', labelNames: ['operation'] });
  registry.gauge({ name: 'portcullis_state_backend_up', help: '1 when the state backend answers, 0 when not.', collect: () => [{ labels: {}, value: sources.stateBackendUp() }] });
  const stalls = registry.counter({ name: 'portcullis_client_write_stalls_total', help: 'Responses ended because the client took no bytes for limits.writeStallTimeoutMs.' });
  const reloads = registry.counter({ name: 'portcullis_config_reloads_total', help: 'Configuration reloads (SIGHUP) by result.', labelNames: ['result'] });
  const refusedConnections = registry.counter({ name: 'portcullis_connections_refused_total', help: 'Client connections refused because the listener had limits.maxConnections open, or their address limits.maxConnectionsPerAddress.', labelNames: ['listener'] });
  const reclaimedConnections = registry.counter({ name: 'portcullis_connections_reclaimed_total', help: 'Client connections without a request in flight closed to make room for a new one (the listener had limits.maxConnections open).', labelNames: ['listener'] });
  const guardFindings = registry.counter({
    name: 'portcullis_guard_findings_total',
    help: "The egress guard's findings in requests, by detector and action (log, mask, block); never the text found.",
    labelNames: ['detector', 'action'],
  });
  const journalFailures = registry.counter({ name: 'portcullis_budget_journal_write_failures_total', help: 'Writes of budgets.json that failed; while they fail, requests of keys with a budget are refused 503 state_unavailable.' });
  const auditFailures = registry.counter({ name: 'portcullis_audit_append_failures_total', help: 'Audit events that could not be appended to the audit chain (each is logged at error level with the whole event).' });
  const exhaustions = registry.counter({ name: 'portcullis_descriptor_exhaustions_total', help: 'Times the process ran out of file descriptors (EMFILE/ENFILE); while it lasts new connections are reset.' });
  registry.gauge({
    name: 'portcullis_open_connections',
    help: 'Client connections open now, per listener.',
    labelNames: ['listener'],
    collect: () => Object.entries(sources.openConnections?.() ?? {}).map(([listener, value]) => ({ labels: { listener }, value })),
  });
  const spansExported = registry.counter({ name: 'portcullis_trace_spans_exported_total', help: 'Trace spans the OTLP collector accepted.' });
  const spansDropped = registry.counter({ name: 'portcullis_trace_spans_dropped_total', help: 'Trace spans not exported, by reason (queue_full, export_failed, rejected, shutdown).', labelNames: ['reason'] });
  registry.gauge({
    name: 'portcullis_key_store_lookups',
    help: 'Keys this instance did not know, looked up in the shared store since start, by result (found, unknown, cached_unknown and shed: answered without asking, failed).',
    labelNames: ['result'],
    collect: () => Object.entries(sources.keyLookups?.() ?? {}).map(([result, value]) => ({ labels: { result }, value })),
  });
  registry.gauge({ name: 'portcullis_descriptors_exhausted', help: '1 while the process is out of file descriptors.', collect: () => [{ labels: {}, value: sources.descriptorsExhausted?.() ?? 0 }] });
  registry.gauge({
    name: 'portcullis_circuit_state',
    help: 'Circuit breaker state per upstream target: 1 for the current state, 0 for the others.',
    labelNames: ['target', 'state'],
    collect: () => sources.targets().flatMap((t) => CIRCUIT_STATES.map((state) => ({ labels: { target: t.id, state }, value: t.circuit === state ? 1 : 0 }))),
  });

  const aliasLabel = (alias: string | null): string => (alias !== null && sources.isKnownAlias(alias) ? alias : UNKNOWN_ALIAS);

  return {
    registry,
    requestDone(line) {
      if (line['outcome'] === CLIENT_WRITE_STALLED) stalls.inc({});
      // Only the model doors carry an alias; other paths are not model traffic.
      const endpoint = line.path === null ? undefined : MODEL_ENDPOINTS.get(line.path);
      if (endpoint === undefined) return;
      const alias = aliasLabel(line.alias);
      requests.inc({ endpoint, alias, status: line.status === null ? 'client_gone' : String(line.status) });
      // A token count is a request, not an answer: the latency and token series are the answers'.
      if (endpoint === COUNT_TOKENS) return;
      if (line.totalMs !== null) duration.observe({ alias }, line.totalMs / 1000);
      if (line.ttfbMs !== null) ttfb.observe({ alias }, line.ttfbMs / 1000);
      if (line.promptTokens !== null) tokens.inc({ alias, kind: 'prompt' }, line.promptTokens);
      if (line.completionTokens !== null) tokens.inc({ alias, kind: 'completion' }, line.completionTokens);
      if (line.costNanos !== null && line.costNanos > 0) cost.inc({ alias, target: line.target ?? 'none' }, line.costNanos);
    },
    upstreamDone: (target, seconds) => upstream.observe({ target }, seconds),
    attempt: (target, outcome) => attempts.inc({ target, outcome }),
    streamStarted: () => streams.inc({}),
    streamEnded: () => streams.dec({}),
    requestStarted: () => inFlight.inc({}),
    requestEnded: () => inFlight.dec({}),
    rateLimited: (alias, limit) => limited.inc({ alias: aliasLabel(alias), limit }),
    chargeClamped: (alias) => clamped.inc({ alias: aliasLabel(alias) }),
    stateBackendUnavailable: (operation) => unavailable.inc({ operation }),
    configReload: (result) => reloads.inc({ result }),
    connectionRefused: (listener) => refusedConnections.inc({ listener }),
    connectionReclaimed: (listener) => reclaimedConnections.inc({ listener }),
    descriptorExhaustion: () => exhaustions.inc({}),
    auditAppendFailure: () => auditFailures.inc({}),
    budgetJournalWriteFailure: () => journalFailures.inc({}),
    guardFinding: (detector, action) => guardFindings.inc({ detector, action }),
    traceSpansExported: (count) => spansExported.inc({}, count),
    traceSpansDropped: (reason, count) => spansDropped.inc({ reason }, count),
    expose: () => registry.expose(),
  };
}
