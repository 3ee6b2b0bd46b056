// OpenAI's request fields beyond the contract's table (present only when the
// operator's field policy accepts them) on the way to Anthropic's Messages API.
// Pure. Same rule as ./anthropic-request.ts: a field with a faithful
// translation is translated, a field whose value changes nothing is left out,
// any other is a 400 naming it, before anything is sent.
// Wire format: https://docs.claude.com/en/api/messages (metadata, tool_choice).
import type { ChatRequest, OptionalRequestFields } from '../chat/types.ts';
import type { RequestFieldName } from '../config/request-fields-config.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import type { RequestRestriction } from './request-restriction.ts';

/** Anthropic's bound on metadata.user_id (its API reference: maxLength 512). */
export const MAX_USER_ID_LENGTH = 512;

interface UnsupportedField {
  /** A value Anthropic's behaviour already matches, so leaving the field out changes nothing. */
  neutral?: (value: unknown) => boolean;
  /** Why there is no translation, for the client's message. */
  why: string;
  /** What check-config lists for an alias that mixes provider types. */
  refused: string;
}

/** The fields with no faithful Anthropic equivalent, in the order they are checked. As data, one line each. */
const UNSUPPORTED_FIELDS: Readonly<Record<string, UnsupportedField>> = {
  seed: { why: 'Anthropic has no sampling seed, so the answer would not be repeatable as asked', refused: 'seed' },
  metadata: {
    neutral: (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 0,
    why: "Anthropic's metadata holds only a user id (send it as 'user' or 'safety_identifier'), not key-value pairs",
    refused: 'metadata pairs',
  },
  logprobs: { neutral: (v) => v === false, why: 'Anthropic returns no log probabilities', refused: 'logprobs true' },
  top_logprobs: { why: 'Anthropic returns no log probabilities', refused: 'top_logprobs' },
  frequency_penalty: { neutral: (v) => v === 0, why: 'Anthropic has no repetition penalties', refused: 'frequency_penalty other than 0' },
  presence_penalty: { neutral: (v) => v === 0, why: 'Anthropic has no repetition penalties', refused: 'presence_penalty other than 0' },
  logit_bias: {
    neutral: (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 0,
    why: 'Anthropic has no token bias (and its token ids are not OpenAI\'s)',
    refused: 'logit_bias',
  },
  reasoning_effort: {
    why: "Anthropic's effort and extended-thinking settings differ by model and take other values, and the gateway does not guess from model names",
    refused: 'reasoning_effort',
  },
  service_tier: { why: "Anthropic's service tiers are not OpenAI's", refused: 'service_tier' },
  prediction: { why: 'Anthropic has no predicted outputs', refused: 'prediction' },
  verbosity: { why: 'Anthropic has no verbosity setting', refused: 'verbosity' },
  store: { neutral: (v) => v === false, why: 'Anthropic does not store completions for later retrieval', refused: 'store true' },
  prompt_cache_key: { why: 'Anthropic caches prompts at cache_control breakpoints, not by a key', refused: 'prompt_cache_key' },
};

/** Read once: the check runs on every request to an Anthropic target. */
const UNSUPPORTED_ENTRIES = Object.entries(UNSUPPORTED_FIELDS) as readonly [keyof OptionalRequestFields, UnsupportedField][];

/** What ANTHROPIC_REFUSES lists for these fields, each with the field it needs accepted. */
export const UNSUPPORTED_FIELD_RULES: readonly RequestRestriction[] = [
  ...UNSUPPORTED_ENTRIES.map(([name, field]) => ({ rule: field.refused, fields: [name as RequestFieldName] })),
  { rule: `user or safety_identifier longer than ${MAX_USER_ID_LENGTH} characters, or both with different values`, fields: ['user', 'safety_identifier'] },
];

/** Throws InvalidRequestError (400, unsupported_parameter) for the first field set to a value Anthropic has no equivalent of. */
export function checkUnsupportedFields(req: ChatRequest): void {
  // Named reads first: most requests carry none of these, and a keyed read per
  // table entry costs more than the rest of a small request's translation.
  if (
    req.seed === undefined && req.metadata === undefined && req.logprobs === undefined && req.top_logprobs === undefined &&
    req.frequency_penalty === undefined && req.presence_penalty === undefined && req.logit_bias === undefined &&
    req.reasoning_effort === undefined && req.service_tier === undefined && req.prediction === undefined &&
    req.verbosity === undefined && req.store === undefined && req.prompt_cache_key === undefined
  ) {
    return;
  }
  for (const [name, field] of UNSUPPORTED_ENTRIES) {
    const value = req[name];
    if (value === undefined || field.neutral?.(value) === true) continue;
    throw new InvalidRequestError(
      `Unsupported parameter: '${name}' is not supported by the provider behind this model alias: ${field.why}. ` +
        'Remove it, or use a model alias served by an OpenAI-compatible provider.',
      name,
      'unsupported_parameter',
    );
  }
}

/**
 * Anthropic's metadata.user_id: the end user's opaque id, for abuse detection.
 * OpenAI's safety_identifier is exactly that, and `user` (which it replaces)
 * was that too. Both with one value: that value; with different values, a 400
 * naming `user`: Anthropic takes one id, and choosing would drop what the
 * client said about who the user is.
 */
export function userIdOf(req: ChatRequest): string | undefined {
  const { user, safety_identifier: safety } = req;
  if (user !== undefined && safety !== undefined && user !== safety) {
    throw new InvalidRequestError(
      "Invalid value for 'user': it differs from 'safety_identifier', and the provider behind this model alias takes one end-user id (metadata.user_id). " +
        'Send one of them, or both with the same value.',
      'user',
      'invalid_value',
    );
  }
  const id = safety ?? user;
  const param = safety !== undefined ? 'safety_identifier' : 'user';
  // Anthropic counts characters (code points); a UTF-16 length above the bound may still be within it.
  const length = id === undefined || id.length <= MAX_USER_ID_LENGTH ? 0 : [...id].length;
  if (length > MAX_USER_ID_LENGTH) {
    throw new InvalidRequestError(
      `Invalid value for '${param}': ${length} characters. The provider behind this model alias takes an end-user id of at most ${MAX_USER_ID_LENGTH} characters; send a shorter one, such as a hash of it.`,
      param,
      'invalid_value',
    );
  }
  return id;
}
