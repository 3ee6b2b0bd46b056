// The guard's vocabulary: detector names (stable: config, errors, logs and
// metrics use them), what a scan reports, and the operator patterns' shape.

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

export const SECRET_DETECTORS = [
  'private_key', 'aws_access_key', 'github_token', 'slack_token', 'stripe_key', 'google_api_key',
  'openai_key', 'anthropic_key', 'jwt', 'portcullis_key', 'secret_assignment',
] as const;
export const PERSONAL_DETECTORS = ['card_number', 'iban', 'email', 'phone', 'us_ssn'] as const;

/** Every built-in detector; operator patterns are named `custom:<name>` besides these. */
export const DETECTOR_NAMES: readonly string[] = [...SECRET_DETECTORS, ...PERSONAL_DETECTORS];

/** The groups a policy may name instead of each detector. */
export const DETECTOR_GROUPS: Readonly<Record<'secrets' | 'personal', readonly string[]>> = {
  secrets: SECRET_DETECTORS,
  personal: PERSONAL_DETECTORS,
};

/** The prefix of an operator pattern's detector name. */
export const CUSTOM_PREFIX = 'custom:';
