// The guard's interface, the one module its users import: what a scan reports,
// the operator patterns' shape, the detector names, the scanner and the
// config-time pattern check. The modules behind it import only its types.

/** A value a detector found: UTF-16 offsets [start, end) in the scanned text. Never the text itself. */
export interface Finding {
  readonly detector: string;
  readonly start: number;
  readonly end: number;
}

/** An operator pattern as configured: a list of literals, or a regular expression run in linear time. */
export interface CustomPattern {
  readonly name: string;
  readonly literals?: readonly string[];
  readonly regex?: string;
}

/** One scan per text, one pass: findings appended in order of start, never overlapping. */
export interface GuardScanner {
  scan(text: string, out: Finding[]): void;
  /** Steps the last scan took: characters read by the pass and by the detectors, plus pattern steps. */
  readonly lastSteps: number;
}

export { CUSTOM_DETECTOR_PREFIX, DETECTOR_GROUPS, DETECTOR_NAMES, PERSONAL_DETECTORS, SECRET_DETECTORS } from './detector-names.ts';
export { compileCustomPattern, type CompiledPattern } from './custom-patterns.ts';
export { createGuardScanner, GuardScanError } from './guard-scanner.ts';
