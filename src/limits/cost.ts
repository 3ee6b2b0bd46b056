// i15-lead: from helper B. A stand-in holding only the two functions helper C's
// branch uses, with the signatures fixed in briefs/i15-shared.md; take helper B's
// src/limits/cost.ts at merge.

/** nanos -> currency units (float, for JSON). */
export function amountOf(nanos: number): number {
  return nanos / 1e9;
}

/** "0.000150 USD": 6 decimals, more if nonzero beyond (up to 9). */
export function formatMoney(nanos: number, currency: string): string {
  const sign = nanos < 0 ? '-' : '';
  const abs = Math.abs(nanos);
  const whole = Math.floor(abs / 1e9);
  let digits = String(abs - whole * 1e9).padStart(9, '0');
  while (digits.length > 6 && digits.endsWith('0')) digits = digits.slice(0, -1);
  return `${sign}${whole}.${digits} ${currency}`;
}
