// The limiter port (Limiter in src/api/ports.ts) as one contract: the rate,
// concurrency and lease scenarios, the budget and cost scenarios, and the charge
// ceiling, run against one implementation. `makeLimiter()` gives a fresh limiter per
// scenario; key ids are unique to the run, so one shared store may back them all.
import type { Limiter } from '../api/ports.ts';
import { runBudgetScenarios } from './limiter-budget-scenarios.ts';
import { runChargeCeilingScenarios } from './limiter-ceiling-scenarios.ts';
import { runLimiterScenarios } from './limiter-scenarios.ts';

/** A fresh limiter for one scenario (closed by the scenario when it ends). */
export type MakeLimiter = () => Limiter | Promise<Limiter>;

/**
 * Registers the limiter cases as node:test tests in describe blocks named after `name`: rate,
 * concurrency and leases, budgets and cost, and the charge ceiling.
 */
export function runLimiterContract(name: string, makeLimiter: MakeLimiter): void {
  runLimiterScenarios(name, makeLimiter);
  runBudgetScenarios(name, makeLimiter);
  runChargeCeilingScenarios(name, makeLimiter);
}
