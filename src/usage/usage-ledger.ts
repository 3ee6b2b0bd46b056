// Per-key usage accounting: requests, tokens and errors. The pure core keeps
// counters; the file shell (usage-file.ts) adds them to disk.
import type { Usage } from '../chat/types.ts';

export interface KeyUsage {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  errors: number;
}

export interface CompletionOutcome {
  /** The upstream's usage, when it gave any (streamed completions included). */
  usage?: Usage | undefined;
  /** The client got an error (status >= 400 or an error frame mid-stream). */
  error: boolean;
}

export function emptyUsage(): KeyUsage {
  return { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0 };
}

export function addUsage(into: KeyUsage, from: KeyUsage): void {
  into.requests += from.requests;
  into.promptTokens += from.promptTokens;
  into.completionTokens += from.completionTokens;
  into.cachedTokens += from.cachedTokens;
  into.errors += from.errors;
}

export interface UsageLedger {
  record(keyId: string, outcome: CompletionOutcome): void;
  /** Counters gathered since the last `drain()`, removed from the ledger. */
  drain(): Map<string, KeyUsage>;
  /** Puts drained counters back (a flush that failed must not lose them). */
  restore(pending: Map<string, KeyUsage>): void;
  /** True when there is something to flush. */
  dirty(): boolean;
}

export function createUsageLedger(): UsageLedger {
  let pending = new Map<string, KeyUsage>();
  const entry = (keyId: string): KeyUsage => {
    let u = pending.get(keyId);
    if (u === undefined) {
      u = emptyUsage();
      pending.set(keyId, u);
    }
    return u;
  };
  return {
    record(keyId, outcome) {
      const u = entry(keyId);
      u.requests++;
      if (outcome.error) u.errors++;
      if (outcome.usage !== undefined) {
        u.promptTokens += outcome.usage.prompt_tokens;
        u.completionTokens += outcome.usage.completion_tokens;
        u.cachedTokens += outcome.usage.prompt_tokens_details.cached_tokens;
      }
    },
    drain() {
      const out = pending;
      pending = new Map();
      return out;
    },
    restore(back) {
      for (const [keyId, u] of back) addUsage(entry(keyId), u);
    },
    dirty: () => pending.size > 0,
  };
}
