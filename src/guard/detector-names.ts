// The built-in detectors' names and their groups. The names are stable: the
// config, key settings, errors, logs and metrics all use them, so a rename is a
// breaking change for operators.

/** Credentials: a leaked one works for whoever reads it. */
export const SECRET_DETECTORS = [
  'private_key',
  'aws_access_key',
  'github_token',
  'slack_token',
  'stripe_key',
  'google_api_key',
  'openai_key',
  'anthropic_key',
  'jwt',
  'portcullis_key',
  'secret_assignment',
] as const;

/** Personal data about a person. */
export const PERSONAL_DETECTORS = ['card_number', 'iban', 'email', 'phone', 'us_ssn'] as const;

export type DetectorName = (typeof SECRET_DETECTORS)[number] | (typeof PERSONAL_DETECTORS)[number];

export const DETECTOR_NAMES: readonly DetectorName[] = Object.freeze([...SECRET_DETECTORS, ...PERSONAL_DETECTORS]);

export type DetectorGroup = 'secrets' | 'personal';

/** A group names every detector in it at once. */
export const DETECTOR_GROUPS: Readonly<Record<DetectorGroup, readonly DetectorName[]>> = Object.freeze({
  secrets: SECRET_DETECTORS,
  personal: PERSONAL_DETECTORS,
});

/** The prefix of an operator pattern's detector name: `custom:project-x`. */
export const CUSTOM_DETECTOR_PREFIX = 'custom:';

export function isDetectorName(name: string): name is DetectorName {
  return (DETECTOR_NAMES as readonly string[]).includes(name);
}

export function isDetectorGroup(name: string): name is DetectorGroup {
  return name === 'secrets' || name === 'personal';
}

/** The group a built-in detector belongs to. */
export function groupOf(name: DetectorName): DetectorGroup {
  return (SECRET_DETECTORS as readonly string[]).includes(name) ? 'secrets' : 'personal';
}
