// The built-in limiters' own scenarios (memory and Redis), beside the port contract
// they share with a host's limiter: the exact token-bucket arithmetic (refill to the
// millisecond, debt, clock steps), burst ordering under parallel admits, the order of
// several refusals, and the internal ceilings. These are how the built-ins count, not
// what the Limiter port promises, so runLimiterContract (public) does not run them.
import { runBudgetScenarios } from './limiter-budget-scenarios.ts';
import { runChargeCeilingScenarios } from './limiter-ceiling-scenarios.ts';
import type { MakeLimiter } from './limiter-contract.ts';
import { runLimiterScenarios } from './limiter-scenarios.ts';

export function runBuiltInLimiterScenarios(name: string, makeLimiter: MakeLimiter): void {
  runLimiterScenarios(name, makeLimiter);
  runBudgetScenarios(name, makeLimiter);
  runChargeCeilingScenarios(name, makeLimiter);
}
