// The detector names, stable: config, errors, logs and metrics use them.

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
