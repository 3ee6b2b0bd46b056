// /healthz and /readyz, on both listeners. /healthz answers while the process
// and its event loop run. /readyz tells a load balancer or systemd whether to
// send traffic: a configuration is loaded, the state store is writable (and
// reachable, for Redis), at least one upstream target has a closed or
// half-open circuit, and the gateway is not draining for shutdown. With Redis
// down and state.onUnavailable "local" the instance still serves (limits per
// instance), so it stays ready and says it is degraded. Every open circuit is
// listed with its window and the last failure's cause, ready or not: the
// answer to "why is this target skipped" (one open target among several
// healthy ones leaves the instance ready).
import { sendJson } from '../http/respond.ts';
import type { RouteHandler } from '../http/request-context.ts';
import type { StateBackend } from '../state/state-backend.ts';
import type { TargetHealth } from '../routing/alias-targets.ts';

interface HealthSources {
  /** Circuit state of every target of the serving config; null before a config is loaded. */
  targets(): TargetHealth[] | null;
  state: StateBackend;
  draining(): boolean;
  /**
   * Include each open circuit's last failure (cause, detail, upstream
   * host:port). Only the admin listener does: the API listener answers anyone
   * who can reach it, and upstream addresses are internal.
   */
  failureDetail?: boolean;
}

type CheckResult = 'ok' | string;

/** A target the gateway skips now, and why. */
export interface OpenCircuit {
  /** `provider/model`, as in the access log. */
  target: string;
  /** When the circuit opened (ISO 8601). */
  since: string | null;
  /** When it lets one probe request through (ISO 8601). */
  until: string | null;
  /** The failure that opened it (or the latest one since), as in the "upstream failed" log line; admin listener only. */
  lastFailure?: { cause: string; detail: string; upstream: string | null; at: string | null } | null;
}

export interface Readiness {
  ready: boolean;
  checks: { config: CheckResult; store: CheckResult; upstreams: CheckResult; shutdown: CheckResult };
  openCircuits: OpenCircuit[];
}

const NO_STORE = { 'cache-control': 'no-store' };
/** The store check's value while serving on per-instance limits. */
const DEGRADED = 'degraded: the state backend is unreachable; limits are counted per instance';

export async function readiness(sources: HealthSources): Promise<Readiness> {
  const targets = sources.targets();
  const health = sources.state.health();
  let store: CheckResult;
  if (health === 'unavailable') store = `the ${sources.state.kind} state backend is unreachable`;
  else if (health === 'degraded') store = DEGRADED;
  else {
    const writable = await sources.state.checkWritable();
    store = writable.ok ? 'ok' : writable.problem;
  }
  let upstreams: CheckResult = 'no configuration';
  const open = (targets ?? []).filter((t) => t.circuit === 'open');
  if (targets !== null) {
    upstreams = open.length < targets.length ? 'ok' : `every target's circuit is open (${open.map((t) => t.id).join(', ')})`;
  }
  const checks = {
    config: targets === null ? 'not loaded' : 'ok',
    store,
    upstreams,
    shutdown: sources.draining() ? 'draining' : 'ok',
  };
  const detail = sources.failureDetail === true;
  return { ready: Object.values(checks).every((c) => c === 'ok' || c === DEGRADED), checks, openCircuits: open.map((t) => openCircuit(t, detail)) };
}

function openCircuit(target: TargetHealth, detail: boolean): OpenCircuit {
  const failure = target.lastFailure;
  const circuit: OpenCircuit = { target: target.id, since: isoTime(target.openedAt), until: isoTime(target.probeAt) };
  if (detail) circuit.lastFailure = failure === null ? null : { cause: failure.kind, detail: failure.detail, upstream: failure.address, at: isoTime(failure.at) };
  return circuit;
}

/** Date's range; an openMs of years could reach past it, and toISOString would throw. */
const MAX_DATE_MS = 8.64e15;

function isoTime(ms: number | null): string | null {
  return ms === null || !(Math.abs(ms) <= MAX_DATE_MS) ? null : new Date(ms).toISOString();
}

export function healthRoutes(sources: HealthSources): Array<[method: string, path: string, handler: RouteHandler]> {
  return [
    ['GET', '/healthz', async (ctx) => sendJson(ctx.res, 200, { status: 'ok' }, NO_STORE)],
    [
      'GET',
      '/readyz',
      async (ctx) => {
        const r = await readiness(sources);
        sendJson(ctx.res, r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not_ready', checks: r.checks, openCircuits: r.openCircuits }, NO_STORE);
      },
    ],
  ];
}
