// The guard over one request body, pure: every string value of the parsed
// body (the texts a client sends upstream, whatever the door: messages,
// system prompts, tool arguments and results, embeddings inputs) is scanned
// once, and the request's policy decides each finding's fate: `block` stops
// the request, `mask` puts a typed placeholder in the text's place, `log` only
// records. A placeholder names its detector and counts within the request
// (`[CARD_NUMBER_1]`), the same value the same placeholder wherever it
// appears, so a model can still tell two cards apart. What this returns never
// holds a matched text: findings carry the detector, the JSON path and the
// action, for errors, the access line and metrics.
import { renderJsonPath } from '../json/json-parse-error.ts';
import type { GuardAction, GuardPolicy } from './guard-policy.ts';
import type { Finding, GuardScanner } from './guard-types.ts';

/** A finding as the sinks see it: never the text. */
export interface GuardFinding {
  readonly detector: string;
  /** The JSON path of the string it was found in (`messages[2].content`). */
  readonly path: string;
  readonly action: GuardAction;
}

export interface GuardOutcome {
  /** Every finding whose action is not `off`, in body order. */
  readonly findings: readonly GuardFinding[];
  /** The first `block` finding: the request is refused with it. */
  readonly blocked: GuardFinding | null;
  /** The body with `mask` findings replaced, or null when nothing was masked. */
  readonly masked: unknown;
}

const NOTHING: GuardOutcome = { findings: [], blocked: null, masked: null };

/** Strings deeper than this are not walked by recursion but refused: the JSON parser's own depth limit is far below it. */
const MAX_DEPTH = 1000;

/** Scans `body` under `policy`. Throws only on a scanner fault (the caller fails closed). */
export function guardBody(body: unknown, scanner: GuardScanner, policy: GuardPolicy): GuardOutcome {
  const run = new GuardRun(scanner, policy);
  const masked = run.walk(body, [], 0);
  if (run.findings.length === 0) return NOTHING;
  return { findings: run.findings, blocked: run.blocked, masked: run.maskedAny ? masked : null };
}

class GuardRun {
  readonly findings: GuardFinding[] = [];
  blocked: GuardFinding | null = null;
  maskedAny = false;
  readonly #scanner: GuardScanner;
  readonly #policy: GuardPolicy;
  readonly #hits: Finding[] = [];
  /** Per detector: each masked value's placeholder, in order of first appearance. */
  readonly #placeholders = new Map<string, Map<string, string>>();

  constructor(scanner: GuardScanner, policy: GuardPolicy) {
    this.#scanner = scanner;
    this.#policy = policy;
  }

  /** The value with its strings masked (the same object when nothing in it was). */
  walk(value: unknown, path: (string | number)[], depth: number): unknown {
    if (depth > MAX_DEPTH) throw new Error('the body is nested deeper than the guard walks');
    if (typeof value === 'string') return this.#text(value, path);
    if (Array.isArray(value)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        const next = this.walk(value[i], path, depth + 1);
        path.pop();
        if (next !== value[i]) (out ??= value.slice())[i] = next;
      }
      return out ?? value;
    }
    if (typeof value === 'object' && value !== null) {
      let out: Record<string, unknown> | null = null;
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        path.push(key);
        const next = this.walk(record[key], path, depth + 1);
        path.pop();
        if (next !== record[key]) (out ??= { ...record })[key] = next;
      }
      return out ?? value;
    }
    return value;
  }

  #text(text: string, path: readonly (string | number)[]): string {
    const hits = this.#hits;
    hits.length = 0;
    this.#scanner.scan(text, hits);
    if (hits.length === 0) return text;
    let rendered: string | null = null;
    let out = '';
    let from = 0;
    let changed = false;
    for (const hit of hits) {
      const action = this.#policy.actionOf(hit.detector);
      if (action === 'off') continue;
      rendered ??= renderJsonPath(path);
      const finding: GuardFinding = { detector: hit.detector, path: rendered, action };
      this.findings.push(finding);
      if (action === 'block') this.blocked ??= finding;
      if (action !== 'mask') continue;
      out += text.slice(from, hit.start) + this.#placeholder(hit.detector, text.slice(hit.start, hit.end));
      from = hit.end;
      changed = true;
    }
    if (!changed) return text;
    this.maskedAny = true;
    return out + text.slice(from);
  }

  #placeholder(detector: string, value: string): string {
    let byValue = this.#placeholders.get(detector);
    if (byValue === undefined) {
      byValue = new Map();
      this.#placeholders.set(detector, byValue);
    }
    let placeholder = byValue.get(value);
    if (placeholder === undefined) {
      placeholder = `[${placeholderName(detector)}_${byValue.size + 1}]`;
      byValue.set(value, placeholder);
    }
    return placeholder;
  }
}

/** `card_number` -> `CARD_NUMBER`; an operator's `custom:project-x` -> `PROJECT_X`. */
export function placeholderName(detector: string): string {
  const name = detector.startsWith('custom:') ? detector.slice('custom:'.length) : detector;
  return name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
}

/** The findings as the access line's `guard` field: `detector:path:action`, at most `max` of them, then how many more. */
export function describeFindings(findings: readonly GuardFinding[], max = 16): string {
  const shown = findings.slice(0, max).map((f) => `${f.detector}:${f.path}:${f.action}`);
  if (findings.length > max) shown.push(`+${findings.length - max} more`);
  return shown.join(',');
}
