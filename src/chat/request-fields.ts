// OpenAI's chat-completions request fields beyond the contract's table: which
// ones a request may carry (the operator's field policy, from "requestFields"
// in the config) and each one's documented type, range and bounds. The
// contract's table stays the default: with no policy, every one of them is
// refused, naming the setting that would accept it. Fields OpenAI defines that
// the gateway never takes are refused saying why; a field OpenAI does not
// know stays a plain unknown parameter.
//
// The kinds of these fields are in the skeleton (request-shape.ts); a field
// that no model accepts is refused by the skeleton's checkers as the body
// arrives (request-observer.ts, request-structure.ts); one that some model
// accepts waits for the validator, which knows the model.
import { AUTO_ALIAS, type GatewayConfig } from '../config/config.ts';
import { NEVER_ACCEPTED_FIELDS, REQUEST_FIELD_NAMES, type RequestFieldName } from '../config/request-fields-config.ts';
import { createIssue, type FieldRefusal, type IssuePath, type RequestIssue, type RequestWalk } from './request-issues.ts';
import { isJsonObject, OPTIONAL_FIELD_SHAPES } from './request-shape.ts';
import type { OptionalRequestFields, Prediction, TextPart } from './types.ts';

export type { RequestFieldName } from '../config/request-fields-config.ts';

type JsonObject = Record<string, unknown>;

/** Which optional fields each model takes; one per configuration. */
export interface FieldPolicy {
  /** Fields some model takes: any other optional field is refused as the body arrives. */
  readonly anywhere: ReadonlySet<RequestFieldName>;
  /** The fields `model` takes: an alias's own list or the top level's; for service-auto, every alias's. */
  acceptedFor(model: string): ReadonlySet<RequestFieldName>;
  /** How a refusal for `model` names the settings that would accept `name`. */
  refusal(name: RequestFieldName, model: string | null): FieldRefusal;
}

const NONE: ReadonlySet<RequestFieldName> = new Set();

class ConfiguredFieldPolicy implements FieldPolicy {
  readonly anywhere: ReadonlySet<RequestFieldName>;
  readonly #global: ReadonlySet<RequestFieldName>;
  readonly #byAlias: ReadonlyMap<string, ReadonlySet<RequestFieldName>>;
  readonly #ownLists: ReadonlySet<string>;

  constructor(config: Pick<GatewayConfig, 'aliases' | 'requestFields'>) {
    this.#global = config.requestFields.length === 0 ? NONE : new Set(config.requestFields);
    const byAlias = new Map<string, ReadonlySet<RequestFieldName>>();
    const own = new Set<string>();
    const union = new Set<RequestFieldName>();
    const embeddings: string[] = [];
    for (const [alias, { kind, requestFields }] of Object.entries(config.aliases)) {
      if (kind === 'embeddings') {
        embeddings.push(alias);
        continue;
      }
      if (requestFields !== null) own.add(alias);
      const accepted = requestFields === null ? this.#global : new Set(requestFields);
      byAlias.set(alias, accepted);
      for (const name of accepted) union.add(name);
    }
    byAlias.set(AUTO_ALIAS, union);
    // No chat request reaches an embeddings alias: its fields are judged as
    // for service-auto, so the answer is the alias's kind (model_kind_mismatch
    // when routed), not a field refusal naming a setting it cannot have.
    for (const alias of embeddings) byAlias.set(alias, union);
    this.#byAlias = byAlias;
    this.#ownLists = own;
    this.anywhere = union;
  }

  acceptedFor(model: string): ReadonlySet<RequestFieldName> {
    return this.#byAlias.get(model) ?? this.#global;
  }

  /** A field no model takes names the top-level setting; one that other models take names this model's. */
  refusal(name: RequestFieldName, model: string | null): FieldRefusal {
    const alias = model !== null && model !== AUTO_ALIAS && this.#byAlias.has(model) && this.anywhere.has(name) ? model : null;
    // The top level's list does nothing for an alias with a list of its own.
    if (alias === null) return { kind: 'not_accepted', name, model: null, settings: this.#ownLists.size === 0 ? ['requestFields'] : ['requestFields', 'aliases.NAME.requestFields'] };
    const settings = this.#ownLists.has(alias) ? [`aliases.${alias}.requestFields`] : ['requestFields', `aliases.${alias}.requestFields`];
    return { kind: 'not_accepted', name, model: alias, settings };
  }
}

export function createFieldPolicy(config: Pick<GatewayConfig, 'aliases' | 'requestFields'>): FieldPolicy {
  return new ConfiguredFieldPolicy(config);
}

/** The contract's table alone: what a validator without a configuration uses. */
export const CONTRACT_ONLY: FieldPolicy = createFieldPolicy({ aliases: {}, requestFields: [] });

/** Why a field OpenAI defines is never taken; undefined for any other key. */
export function neverAccepted(key: string): FieldRefusal | undefined {
  return Object.hasOwn(NEVER_ACCEPTED_FIELDS, key) ? { kind: 'never', why: NEVER_ACCEPTED_FIELDS[key] as string } : undefined;
}

/** The issue for a root key the policy refuses whatever the model, or null when some model may take it. */
export function refusedEverywhere(key: string, policy: FieldPolicy): RequestIssue | null {
  const never = neverAccepted(key);
  if (never !== undefined) return createIssue([key], { code: 'unknown_parameter', refusal: never });
  if (!OPTIONAL_FIELD_SHAPES.has(key) || policy.anywhere.has(key as RequestFieldName)) return null;
  return createIssue([key], { code: 'unknown_parameter', refusal: policy.refusal(key as RequestFieldName, null) });
}

/** OpenAI: "Set of 16 key-value pairs", keys "a maximum length of 64 characters", values "512 characters". */
const MAX_METADATA_PAIRS = 16;
const MAX_METADATA_KEY = 64;
const MAX_METADATA_VALUE = 512;
/** The gateway's bound on identifiers (user, safety_identifier, prompt_cache_key). */
export const MAX_IDENTIFIER = 256;
/** The gateway's bound on logit_bias entries; OpenAI takes biases from -100 to 100. */
const MAX_LOGIT_BIAS_ENTRIES = 300;
const MAX_TOP_LOGPROBS = 20;
/** Beyond these a JavaScript number cannot hold every integer, so the seed sent would not be the seed asked for. */
const SEED_RANGE = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] as const;
const TOKEN_ID = /^(0|[1-9][0-9]{0,9})$/;

const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
const SERVICE_TIERS = ['auto', 'default', 'flex', 'scale', 'priority'] as const;
const VERBOSITIES = ['low', 'medium', 'high'] as const;

/**
 * Checks one optional field's value (not null; its kind not yet tested) and
 * sets it on `out`. A value of a kind the skeleton refuses marks the walk
 * structural; the structural pass reports it.
 */
export function normaliseOptionalField(key: RequestFieldName, value: unknown, out: OptionalRequestFields, walk: RequestWalk): void {
  const issues = walk.issues;
  switch (key) {
    case 'seed':
      if (typeof value !== 'number') walk.structural = true;
      else if (integerIn(key, value, SEED_RANGE[0], SEED_RANGE[1], issues)) out.seed = value;
      return;
    case 'user':
    case 'safety_identifier':
    case 'prompt_cache_key':
      if (typeof value !== 'string') walk.structural = true;
      else if (value.length > MAX_IDENTIFIER) issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'too_long', maximum: MAX_IDENTIFIER } }));
      else out[key] = value;
      return;
    case 'metadata':
      if (!isJsonObject(value)) walk.structural = true;
      else out.metadata = metadataOf(value, walk);
      return;
    case 'parallel_tool_calls':
    case 'logprobs':
    case 'store':
      if (typeof value !== 'boolean') walk.structural = true;
      else out[key] = value;
      return;
    case 'top_logprobs':
      if (typeof value !== 'number') walk.structural = true;
      else if (integerIn(key, value, 0, MAX_TOP_LOGPROBS, issues)) out.top_logprobs = value;
      return;
    case 'frequency_penalty':
    case 'presence_penalty':
      if (typeof value !== 'number') walk.structural = true;
      else if (numberIn(key, value, -2, 2, issues)) out[key] = value;
      return;
    case 'logit_bias':
      if (!isJsonObject(value)) walk.structural = true;
      else out.logit_bias = logitBiasOf(value, walk);
      return;
    case 'reasoning_effort':
      out.reasoning_effort = oneOf(key, value, REASONING_EFFORTS, walk);
      return;
    case 'service_tier':
      out.service_tier = oneOf(key, value, SERVICE_TIERS, walk);
      return;
    case 'verbosity':
      out.verbosity = oneOf(key, value, VERBOSITIES, walk);
      return;
    case 'prediction':
      if (!isJsonObject(value)) walk.structural = true;
      else out.prediction = predictionOf(value, walk);
      return;
    case 'json_schema':
      // A value of response_format.type, not a field: the validator's response_format rules.
      return;
  }
}

/** Rules that relate an optional field to another, after the walk. */
export function relateOptionalFields(out: OptionalRequestFields, issues: RequestIssue[]): void {
  if (out.top_logprobs !== undefined && out.logprobs !== true) {
    issues.push(createIssue(['top_logprobs'], { code: 'invalid_value', reason: { rule: 'requires_logprobs' } }));
  }
}

/** An integer from `minimum` to `maximum`, else the issue (a decimal is a wrong type, as OpenAI says). */
export function integerIn(key: string, value: number, minimum: number, maximum: number, issues: RequestIssue[]): boolean {
  if (!Number.isInteger(value)) {
    issues.push(createIssue([key], { code: 'invalid_type', expected: 'an integer', received: 'decimal' }));
    return false;
  }
  if (value < minimum || value > maximum) {
    issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'range', received: value, minimum, maximum, integer: true } }));
    return false;
  }
  return true;
}

/** A number from `minimum` to `maximum`, else the issue. */
export function numberIn(key: string, value: number, minimum: number, maximum: number, issues: RequestIssue[]): boolean {
  // Written so that NaN (possible from a JavaScript caller, never from JSON) fails too.
  if (value >= minimum && value <= maximum) return true;
  issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'range', received: value, minimum, maximum, integer: false } }));
  return false;
}

function oneOf<T extends string>(key: string, value: unknown, allowed: readonly T[], walk: RequestWalk): T | undefined {
  if (typeof value !== 'string') {
    walk.structural = true;
    return undefined;
  }
  if (allowed.includes(value as T)) return value as T;
  walk.issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'one_of', received: value, allowed } }));
  return undefined;
}

function metadataOf(value: JsonObject, walk: RequestWalk): Record<string, string> | undefined {
  const keys = Object.keys(value);
  if (keys.length > MAX_METADATA_PAIRS) {
    walk.issues.push(createIssue(['metadata'], { code: 'invalid_value', reason: { rule: 'max_entries', maximum: MAX_METADATA_PAIRS } }));
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const key of keys) {
    const entry = value[key];
    if (entry === undefined) continue;
    const at: IssuePath = ['metadata', key];
    if (key.length > MAX_METADATA_KEY) walk.issues.push(createIssue(at, { code: 'invalid_value', reason: { rule: 'too_long', maximum: MAX_METADATA_KEY } }));
    else if (typeof entry !== 'string') walk.issues.push(createIssue(at, { code: 'invalid_type', expected: 'a string', received: kindOf(entry) }));
    else if (entry.length > MAX_METADATA_VALUE) walk.issues.push(createIssue(at, { code: 'invalid_value', reason: { rule: 'too_long', maximum: MAX_METADATA_VALUE } }));
    // An own property even for "__proto__" (the JSON parser makes it one): assigned, it would set the prototype and vanish.
    else Object.defineProperty(out, key, { value: entry, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function logitBiasOf(value: JsonObject, walk: RequestWalk): Record<string, number> | undefined {
  const keys = Object.keys(value);
  if (keys.length > MAX_LOGIT_BIAS_ENTRIES) {
    walk.issues.push(createIssue(['logit_bias'], { code: 'invalid_value', reason: { rule: 'max_entries', maximum: MAX_LOGIT_BIAS_ENTRIES } }));
    return undefined;
  }
  const out: Record<string, number> = {};
  for (const key of keys) {
    const bias = value[key];
    if (bias === undefined) continue;
    const at: IssuePath = ['logit_bias', key];
    if (!TOKEN_ID.test(key)) walk.issues.push(createIssue(at, { code: 'invalid_value', reason: { rule: 'token_id', received: key } }));
    else if (typeof bias !== 'number') walk.issues.push(createIssue(at, { code: 'invalid_type', expected: 'an integer', received: kindOf(bias) }));
    else if (!Number.isInteger(bias)) walk.issues.push(createIssue(at, { code: 'invalid_type', expected: 'an integer', received: 'decimal' }));
    else if (bias < -100 || bias > 100) walk.issues.push(createIssue(at, { code: 'invalid_value', reason: { rule: 'range', received: bias, minimum: -100, maximum: 100, integer: true } }));
    else out[key] = bias;
  }
  return out;
}

function predictionOf(value: JsonObject, walk: RequestWalk): Prediction | undefined {
  // Other keys: the skeleton's unknown fields; the structural pass reports them.
  for (const key of Object.keys(value)) if (key !== 'type' && key !== 'content') walk.structural = true;
  const type = value['type'];
  const content = value['content'];
  if (type === undefined) walk.issues.push(createIssue(['prediction', 'type'], { code: 'missing_required_parameter' }));
  else if (typeof type !== 'string') walk.structural = true;
  else if (type !== 'content') walk.issues.push(createIssue(['prediction', 'type'], { code: 'invalid_value', reason: { rule: 'one_of', received: type, allowed: ['content'] } }));
  if (content === undefined) {
    walk.issues.push(createIssue(['prediction', 'content'], { code: 'missing_required_parameter' }));
    return undefined;
  }
  if (typeof content === 'string') return { type: 'content', content };
  if (!Array.isArray(content)) {
    walk.structural = true;
    return undefined;
  }
  const parts: TextPart[] = [];
  content.forEach((part: unknown, i: number) => {
    const at: IssuePath = ['prediction', 'content', i];
    if (!isJsonObject(part)) walk.structural = true;
    else if (part['type'] !== 'text') {
      walk.issues.push(createIssue([...at, 'type'], { code: 'invalid_value', reason: { rule: 'one_of', received: String(part['type']), allowed: ['text'] } }));
    } else if (typeof part['text'] !== 'string') {
      if (part['text'] === undefined) walk.issues.push(createIssue([...at, 'text'], { code: 'missing_required_parameter' }));
      else walk.structural = true;
    } else {
      parts.push({ type: 'text', text: part['text'] });
    }
  });
  if (content.length === 0) walk.issues.push(createIssue(['prediction', 'content'], { code: 'array_below_min_length', minimum: 1 }));
  return { type: 'content', content: parts };
}

function kindOf(value: unknown): 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null' {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value as 'object' | 'string' | 'number' | 'boolean';
}

const FIELD_NAMES: ReadonlySet<string> = new Set(REQUEST_FIELD_NAMES);

/**
 * The optional fields a request carries (json_schema: its response format),
 * in the request's order. Walks the request's own keys (a handful), not the
 * catalogue: every request's access line asks.
 */
export function requestFieldsUsed(request: OptionalRequestFields & { response_format?: { type: string } | undefined }): RequestFieldName[] {
  const used: RequestFieldName[] = [];
  for (const key of Object.keys(request)) {
    if (FIELD_NAMES.has(key)) {
      if ((request as Record<string, unknown>)[key] !== undefined) used.push(key as RequestFieldName);
    } else if (key === 'response_format' && request.response_format?.type === 'json_schema') {
      used.push('json_schema');
    }
  }
  return used;
}
