// The money settings of the config: "currency" at the top, and "price" on an
// alias or a target (per million input, cached-input and output tokens). The
// checks follow the units of src/limits/cost.ts: a price is a whole number of
// millionths of a currency unit per million tokens, so the cost of any token
// count is an exact integer of nanos after one rounding up.
import { DEFAULT_CURRENCY, type Price } from './config.ts';
import { join, type Checker, type Obj } from './config-checker.ts';

/** The most a million tokens may cost in a config; above every price published today by two orders of magnitude. */
export const MAX_PRICE = 10_000;
/** Decimals a price may have: its millionths are whole (src/limits/cost.ts). */
export const PRICE_DECIMALS = 6;

const PRICE_SETTINGS = ['input', 'cachedInput', 'output'];
const CURRENCY = /^[A-Z]{3}$/;

/** The top-level "currency": an ISO 4217 code, only a label (nothing is converted). */
export function parseCurrency(c: Checker, root: Obj): string {
  return c.optional(root, 'currency', '', DEFAULT_CURRENCY, (v, at) => {
    if (typeof v === 'string' && CURRENCY.test(v)) return v;
    return c.report(at, { code: 'invalid_value', message: 'must be a three-letter ISO 4217 code in capitals, such as "USD" or "EUR"' });
  });
}

/**
 * `{ "input": 0.15, "cachedInput": 0.075, "output": 0.6 }`: input and output
 * are required, cachedInput defaults to input and may not exceed it (cached
 * prompt tokens are billed at a discount by every provider; a larger value is
 * taken for a typo, such as the two swapped). Undefined when it has a problem.
 * `outputRequired` false (an embeddings alias, whose answers have no output
 * tokens): output defaults to 0.
 */
export function parsePrice(c: Checker, value: unknown, at: string, outputRequired = true): Price | undefined {
  const o = c.object(value, at, PRICE_SETTINGS);
  if (o === undefined) return undefined;
  const input = o['input'] === undefined ? c.report(join(at, 'input'), { code: 'required' }) : priceNumber(c, o['input'], join(at, 'input'));
  const output =
    o['output'] === undefined ? (outputRequired ? c.report(join(at, 'output'), { code: 'required' }) : 0) : priceNumber(c, o['output'], join(at, 'output'));
  const cachedAt = join(at, 'cachedInput');
  const cachedInput = o['cachedInput'] === undefined ? input : priceNumber(c, o['cachedInput'], cachedAt);
  if (input === undefined || output === undefined || cachedInput === undefined) return undefined;
  if (cachedInput > input) {
    return c.report(cachedAt, { code: 'conflict', message: `must not exceed input (${input}): cached prompt tokens are billed at a discount` });
  }
  return { input, cachedInput, output };
}

function priceNumber(c: Checker, value: unknown, at: string): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_PRICE) {
    return c.report(at, { code: 'invalid_value', message: `must be a number from 0 to ${MAX_PRICE}: the price of a million tokens in the config's currency` });
  }
  if (decimals(value) > PRICE_DECIMALS) {
    return c.report(at, {
      code: 'invalid_value',
      message: `has more than ${PRICE_DECIMALS} decimals; prices are per million tokens (write 0.15 for $0.15 per million, not 0.00000015 per token)`,
    });
  }
  return value;
}

/**
 * Decimals of a number as JSON would write it back: the shortest string that
 * reads as the same double, so 0.15 has 2 however it is stored. Numbers in
 * (0, 1e-6) print with an exponent and have more than 6.
 */
function decimals(value: number): number {
  const text = String(value);
  if (text.includes('e')) return PRICE_DECIMALS + 1;
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}
