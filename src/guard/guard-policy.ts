// What the guard does with a finding, per detector: the effective policy of one
// request from the config's top level, the alias's override and the key's
// settings. Pure; the config parser and the key settings check their input
// with the same functions, so a setting is refused the same way wherever it is
// written.
import type { CompiledPattern } from './custom-patterns.ts';
import { CUSTOM_DETECTOR_PREFIX, DETECTOR_NAMES, groupOf, isDetectorGroup, isDetectorName, type DetectorGroup, type DetectorName } from './detector-names.ts';

/** Ordered by strictness: a later action is stricter. */
export const GUARD_ACTIONS = ['off', 'log', 'mask', 'block'] as const;
export type GuardAction = (typeof GUARD_ACTIONS)[number];

/** Detector or group name -> action, as written; a name beats its group. */
export type GuardDetectorSettings = Readonly<Partial<Record<DetectorName | DetectorGroup, GuardAction>>>;

/** An operator pattern: literals or a regex, and what a match of it does. */
export interface GuardPattern {
  readonly name: string;
  readonly literals?: readonly string[];
  readonly regex?: string;
  readonly action: GuardAction;
  /** Compiled when the config was read (./custom-patterns.ts). */
  readonly compiled: CompiledPattern;
}

/** What the guard does with the answers (`guard.answers`): off unless set. */
export interface AnswerGuardSettings {
  /** Scan the answer's text under the request's policy (block: the answer is cut there, as a content filter would). */
  readonly scan: boolean;
  /** Put the request's masked values back where the answer names their placeholders. */
  readonly restore: boolean;
  /** A streamed answer's characters held back per text, so a value split over chunks is still caught. */
  readonly holdBackChars: number;
}

export const ANSWERS_OFF: AnswerGuardSettings = Object.freeze({ scan: false, restore: false, holdBackChars: 256 });

/** The config's top-level `guard`. */
export interface GuardConfig {
  readonly detectors: GuardDetectorSettings;
  readonly patterns: readonly GuardPattern[];
  readonly answers: AnswerGuardSettings;
}

/** An alias's `guard`: overrides the top level for that alias (`answers`: as a whole, when given). */
export interface AliasGuard {
  readonly detectors: GuardDetectorSettings;
  readonly answers: AnswerGuardSettings | null;
}

/** The answer settings of a request on `alias`: the alias's when it gives them, else the top level's. */
export function effectiveAnswerSettings(top: GuardConfig | null, alias: AliasGuard | null): AnswerGuardSettings {
  return alias?.answers ?? top?.answers ?? ANSWERS_OFF;
}

/** A key's `guard`: can only make the alias's policy stricter. */
export interface KeyGuard {
  readonly detectors: GuardDetectorSettings;
}

export interface GuardPolicy {
  /** A built-in detector's name or `custom:<pattern>`; 'off' for a name nothing sets. */
  actionOf(detector: string): GuardAction;
  /** True when any detector or pattern does something other than off. */
  readonly active: boolean;
}

export function stricterAction(a: GuardAction, b: GuardAction): GuardAction {
  return GUARD_ACTIONS.indexOf(a) >= GUARD_ACTIONS.indexOf(b) ? a : b;
}

/** The action one level's settings give `detector`, or undefined when they name neither it nor its group. */
function settingOf(settings: GuardDetectorSettings | undefined, detector: DetectorName): GuardAction | undefined {
  if (settings === undefined) return undefined;
  return settings[detector] ?? settings[groupOf(detector)];
}

const OFF_POLICY: GuardPolicy = Object.freeze({ actionOf: () => 'off' as const, active: false });

/**
 * The policy of one request. Built-in detectors: the alias's setting (name,
 * else group) if it has one, else the top level's (name, else group), else
 * off; then the key's setting when it is stricter. Patterns: their own action
 * from the top level.
 */
export function effectiveGuardPolicy(top: Pick<GuardConfig, 'detectors' | 'patterns'> | null, alias: Pick<AliasGuard, 'detectors'> | null, key: KeyGuard | null): GuardPolicy {
  if (top === null && alias === null && key === null) return OFF_POLICY;
  const actions = new Map<string, GuardAction>();
  for (const detector of DETECTOR_NAMES) {
    const base = settingOf(alias?.detectors, detector) ?? settingOf(top?.detectors, detector) ?? 'off';
    actions.set(detector, stricterAction(base, settingOf(key?.detectors, detector) ?? 'off'));
  }
  for (const pattern of top?.patterns ?? []) actions.set(CUSTOM_DETECTOR_PREFIX + pattern.name, pattern.action);
  let active = false;
  for (const action of actions.values()) if (action !== 'off') active = true;
  return Object.freeze({ actionOf: (detector: string) => actions.get(detector) ?? 'off', active });
}

/** A problem in a `detectors` object: the key it is at (null: the object itself) and why. */
export interface GuardSettingProblem {
  readonly key: string | null;
  readonly message: string;
}

/**
 * Checks a `detectors` object (config top level, alias, or key settings):
 * every key a detector or group name, every value an action. Returns the
 * settings (without the wrong entries) and every problem.
 */
export function checkGuardDetectors(value: unknown): { detectors: GuardDetectorSettings; problems: GuardSettingProblem[] } {
  const problems: GuardSettingProblem[] = [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { detectors: {}, problems: [{ key: null, message: 'must be an object of detector or group names to actions' }] };
  }
  const detectors: Partial<Record<DetectorName | DetectorGroup, GuardAction>> = {};
  for (const [name, action] of Object.entries(value)) {
    if (!isDetectorName(name) && !isDetectorGroup(name)) {
      const hint = name.startsWith(CUSTOM_DETECTOR_PREFIX) ? 'a pattern has its own "action" in the top-level guard.patterns; ' : '';
      problems.push({ key: name, message: `unknown detector; ${hint}use a group (secrets, personal) or one of ${DETECTOR_NAMES.join(', ')}` });
      continue;
    }
    if (typeof action !== 'string' || !(GUARD_ACTIONS as readonly string[]).includes(action)) {
      problems.push({ key: name, message: `must be one of ${GUARD_ACTIONS.map((a) => `"${a}"`).join(', ')}` });
      continue;
    }
    detectors[name] = action as GuardAction;
  }
  return { detectors: Object.freeze(detectors), problems };
}

