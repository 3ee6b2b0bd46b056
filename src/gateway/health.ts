// /healthz and /readyz, on both listeners. /healthz answers while the process
// and its event loop run. /readyz tells a load balancer or systemd whether to
// send traffic: a configuration is loaded, the state store is writable (and
// reachable, for Redis), at least one upstream target has a closed or
// half-open circuit, and the gateway is not draining for shutdown. With Redis
// down and state.onUnavailable "local" the instance still serves (limits per
// instance), so it stays ready and says it is degraded.
import { sendJson } from '../http/respond.ts';
import type { RouteHandler } from '../http/request-context.ts';
import type { StateBackend } from '../state/state-backend.ts';
import type { TargetHealth } from '../routing/alias-targets.ts';

interface HealthSources {
  /** Circuit state of every target of the serving config; null before a config is loaded. */
  targets(): TargetHealth[] | null;
  state: StateBackend;
  draining(): boolean;
}

type CheckResult = 'ok' | string;

export interface Readiness {
  ready: boolean;
  checks: { config: CheckResult; store: CheckResult; upstreams: CheckResult; shutdown: CheckResult };
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
  if (targets !== null) {
    const open = targets.filter((t) => t.circuit === 'open');
    upstreams = open.length < targets.length ? 'ok' : `every target's circuit is open (${open.map((t) => t.id).join(', ')})`;
  }
  const checks = {
    config: targets === null ? 'not loaded' : 'ok',
    store,
    upstreams,
    shutdown: sources.draining() ? 'draining' : 'ok',
  };
  return { ready: Object.values(checks).every((c) => c === 'ok' || c === DEGRADED), checks };
}

export function healthRoutes(sources: HealthSources): Array<[method: string, path: string, handler: RouteHandler]> {
  return [
    ['GET', '/healthz', async (ctx) => sendJson(ctx.res, 200, { status: 'ok' }, NO_STORE)],
    [
      'GET',
      '/readyz',
      async (ctx) => {
        const r = await readiness(sources);
        sendJson(ctx.res, r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not_ready', checks: r.checks }, NO_STORE);
      },
    ],
  ];
}
