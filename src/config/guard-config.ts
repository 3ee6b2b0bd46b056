// The egress guard's settings: the top-level `guard` (detectors and operator
// patterns) and an alias's `guard` (detectors only, overriding the top level
// for that alias). Absent means off. Patterns are compiled here, so a pattern
// the scanner cannot run is refused at load with why.
import { compileCustomPattern } from '../guard/guard-types.ts';
import { ANSWERS_OFF, checkGuardDetectors, GUARD_ACTIONS, type AliasGuard, type AnswerGuardSettings, type GuardAction, type GuardConfig, type GuardDetectorSettings, type GuardPattern } from '../guard/guard-policy.ts';
import { join, type Checker, type Obj } from './config-checker.ts';

const GUARD_SETTINGS = ['detectors', 'patterns', 'answers'];
const ALIAS_GUARD_SETTINGS = ['detectors', 'answers'];
const ANSWER_SETTINGS = ['scan', 'restore', 'holdBackChars'];
/** Long enough for any built-in detector's value and the context it reads; short enough to keep a stream flowing. */
const MIN_HOLD_BACK = 64;
const MAX_HOLD_BACK = 65_536;
const PATTERN_SETTINGS = ['name', 'literals', 'regex', 'action'];
/** Letters, digits, "_", "-" and ".": the name is a log field and a metric label as `custom:<name>`. */
const PATTERN_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const MAX_PATTERNS = 100;
const MAX_LITERALS = 1000;
const MAX_LITERAL_LENGTH = 1000;

/** The top-level `guard`; null when it is absent. */
export function parseGuard(c: Checker, value: unknown): GuardConfig | null {
  if (value === undefined) return null;
  const o = c.object(value, 'guard', GUARD_SETTINGS);
  if (o === undefined) return null;
  return Object.freeze({
    detectors: parseDetectors(c, o, 'guard'),
    patterns: parsePatterns(c, o['patterns'], 'guard.patterns'),
    answers: parseAnswers(c, o['answers'], 'guard.answers') ?? ANSWERS_OFF,
  });
}

/** An alias's `guard` at `at` (aliases.<name>.guard); null when it is absent. */
export function parseAliasGuard(c: Checker, value: unknown, at: string): AliasGuard | null {
  if (value === undefined) return null;
  const o = c.object(value, at, ALIAS_GUARD_SETTINGS);
  if (o === undefined) return null;
  return Object.freeze({ detectors: parseDetectors(c, o, at), answers: parseAnswers(c, o['answers'], join(at, 'answers')) });
}

/** `answers` at `at`: null when absent; each setting absent is off (holdBackChars: the default). */
function parseAnswers(c: Checker, value: unknown, at: string): AnswerGuardSettings | null {
  if (value === undefined) return null;
  const o = c.object(value, at, ANSWER_SETTINGS);
  if (o === undefined) return null;
  const scan = o['scan'] === undefined ? false : c.boolean(o['scan'], join(at, 'scan'));
  const restore = o['restore'] === undefined ? false : c.boolean(o['restore'], join(at, 'restore'));
  const holdBackChars = o['holdBackChars'] === undefined ? ANSWERS_OFF.holdBackChars : c.integer(o['holdBackChars'], join(at, 'holdBackChars'), MIN_HOLD_BACK, MAX_HOLD_BACK);
  if (scan === undefined || restore === undefined || holdBackChars === undefined) return null;
  return Object.freeze({ scan, restore, holdBackChars });
}

function parseDetectors(c: Checker, o: Obj, at: string): GuardDetectorSettings {
  if (o['detectors'] === undefined) return Object.freeze({});
  const dat = join(at, 'detectors');
  const { detectors, problems } = checkGuardDetectors(o['detectors']);
  for (const p of problems) {
    if (p.key === null) c.report(dat, { code: 'not_object' });
    else c.report(join(dat, p.key), { code: 'invalid_value', message: p.message });
  }
  return detectors;
}

function parsePatterns(c: Checker, value: unknown, at: string): readonly GuardPattern[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value)) return c.report(at, { code: 'not_array', message: 'must be an array of patterns ({ "name", "literals" or "regex", "action" })' }) ?? [];
  if (value.length > MAX_PATTERNS) return c.report(at, { code: 'too_many', message: `must have at most ${MAX_PATTERNS} entries` }) ?? [];
  const patterns: GuardPattern[] = [];
  const names = new Set<string>();
  value.forEach((v: unknown, i: number) => {
    const pat = `${at}[${i}]`;
    const pattern = parsePattern(c, v, pat);
    if (pattern === undefined) return;
    if (names.has(pattern.name)) {
      c.report(join(pat, 'name'), { code: 'conflict', message: `'${pattern.name}' is the name of an earlier pattern; pattern names must differ` });
      return;
    }
    names.add(pattern.name);
    patterns.push(pattern);
  });
  return Object.freeze(patterns);
}

function parsePattern(c: Checker, value: unknown, at: string): GuardPattern | undefined {
  const o = c.object(value, at, PATTERN_SETTINGS);
  if (o === undefined) return undefined;
  const issuesBefore = c.issues.length;
  const nat = join(at, 'name');
  const name = o['name'] === undefined ? c.report(nat, { code: 'required' }) : c.string(o['name'], nat);
  if (name !== undefined && !PATTERN_NAME.test(name)) {
    c.report(nat, { code: 'invalid_name', message: 'pattern names use lower-case letters, digits, "_" and "-" (at most 64): they name a metric label and a placeholder' });
  }
  const action: GuardAction | undefined = o['action'] === undefined ? c.report(join(at, 'action'), { code: 'required' }) : c.oneOf(o['action'], join(at, 'action'), GUARD_ACTIONS);
  let literals: readonly string[] | undefined;
  let regex: string | undefined;
  if (o['literals'] !== undefined && o['regex'] !== undefined) {
    c.report(at, { code: 'conflict', message: 'give either "literals" or "regex", not both' });
  } else if (o['literals'] !== undefined) {
    literals = parseLiterals(c, o['literals'], join(at, 'literals'));
  } else if (o['regex'] !== undefined) {
    regex = c.string(o['regex'], join(at, 'regex'));
  } else {
    c.report(join(at, 'literals'), { code: 'required', hint: '(or give "regex")' });
  }
  if (c.issues.length > issuesBefore || name === undefined || action === undefined) return undefined;
  const source = { name, ...(literals === undefined ? {} : { literals }), ...(regex === undefined ? {} : { regex }) };
  const compiled = compileCustomPattern(source);
  if ('problem' in compiled) return c.report(join(at, literals === undefined ? 'regex' : 'literals'), { code: 'invalid_value', message: `cannot be used: ${compiled.problem}` });
  return Object.freeze({ ...source, action, compiled });
}

function parseLiterals(c: Checker, value: unknown, at: string): readonly string[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return c.report(at, { code: 'not_array', message: 'must be a non-empty array of strings' });
  if (value.length > MAX_LITERALS) return c.report(at, { code: 'too_many', message: `must have at most ${MAX_LITERALS} entries` });
  const out: string[] = [];
  value.forEach((v: unknown, i: number) => {
    const s = c.string(v, `${at}[${i}]`);
    if (s === undefined) return;
    if (s.length > MAX_LITERAL_LENGTH) c.report(`${at}[${i}]`, { code: 'invalid_value', message: `must be at most ${MAX_LITERAL_LENGTH} characters` });
    else out.push(s);
  });
  return Object.freeze(out);
}
