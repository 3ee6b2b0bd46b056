// The client's 400 when no target of an alias can take a request: each target's
// adapter said why it cannot express the request (ChatProvider.refusal), and
// none can, whatever the upstreams' health. Pure over the refusals.
import { InvalidRequestError } from '../errors/api-error.ts';
import type { InvalidRequestCode } from '../errors/catalogue.ts';

export interface TargetRefusal {
  /** `provider/model`, as in the access line: the operator's name, never the client's. */
  targetId: string;
  /** How the client's message names it: `target 2 (anthropic)`. */
  label: string;
  refusal: InvalidRequestError;
}

/**
 * How a client reads a target: its place among the alias's targets (1-based,
 * config order) and its provider type. The gateway does not show clients the
 * provider names or upstream models behind an alias.
 */
export function targetLabel(position: number, providerType: string): string {
  return `target ${position} (${providerType})`;
}

/**
 * One target: its refusal as it is (it already speaks of "the provider behind
 * this model alias"). Several: one message naming each target by its label
 * and its reason; `param` and `code` are the refusals' own when they agree
 * (two targets of one provider type refuse alike), otherwise null and
 * invalid_value.
 */
export function everyTargetRefused(alias: string, refusals: readonly TargetRefusal[]): InvalidRequestError {
  const first = refusals[0];
  if (first === undefined) throw new TypeError('everyTargetRefused needs at least one refusal.');
  if (refusals.length === 1) return first.refusal;
  const reasons = refusals.map((r) => `${r.label}: ${r.refusal.message}`).join(' ');
  const param = refusals.every((r) => r.refusal.param === first.refusal.param) ? first.refusal.param : null;
  const code = refusals.every((r) => r.refusal.code === first.refusal.code) ? (first.refusal.code as InvalidRequestCode) : 'invalid_value';
  return new InvalidRequestError(`No upstream of model '${alias}' can take this request. ${reasons}`, param, code);
}
