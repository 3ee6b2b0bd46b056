// The limiter port (Limiter in src/api/limits.ts) as one contract a host's limiter can
// pass from the port's doc comments alone: rate, concurrency, leases, budgets, cost and
// the charge ceiling. `makeLimiter()` gives a fresh limiter per scenario; key ids are
// unique to the run, so one shared store may back them all.
import type { Limiter } from '../api/limits.ts';
import { runLimiterPortScenarios } from './limiter-port-scenarios.ts';

/** A fresh limiter for one scenario (closed by the scenario when it ends). */
export type MakeLimiter = () => Limiter | Promise<Limiter>;

/**
 * Registers the limiter cases as node:test tests in a describe block named after `name`: rate,
 * concurrency and leases, budgets and cost, and the charge ceiling, as the Limiter port documents them.
 */
export function runLimiterContract(name: string, makeLimiter: MakeLimiter): void {
  runLimiterPortScenarios(name, makeLimiter);
}
