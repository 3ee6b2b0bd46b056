// "requestFields": which of OpenAI's chat-completions request fields beyond
// the contract's table the gateway takes, at the top level (every alias) and
// per alias (that alias only, instead of the top level's list). The default
// is none: the contract's table alone. What each name admits and how it is
// checked is src/chat/request-fields.ts; docs/request-fields.md is the
// operator's reference.
import { join, type Checker, type Obj } from './config-checker.ts';
import { didYouMean } from './config-issues.ts';

/**
 * The names an operator may list. `json_schema` is a value of
 * response_format.type; every other name is a request field of its own.
 */
export const REQUEST_FIELD_NAMES = [
  'json_schema',
  'seed',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'metadata',
  'parallel_tool_calls',
  'logprobs',
  'top_logprobs',
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
  'reasoning_effort',
  'service_tier',
  'prediction',
  'verbosity',
  'store',
] as const;

export type RequestFieldName = (typeof REQUEST_FIELD_NAMES)[number];

/** Fields OpenAI defines that the gateway never takes: naming one is a config error that says so. */
export const NEVER_ACCEPTED_FIELDS: Readonly<Record<string, string>> = {
  audio: 'the gateway answers text only',
  modalities: 'the gateway answers text only',
  web_search_options: 'a web search would run outside the gateway',
  functions: "it is deprecated; the contract's tools take its place",
  function_call: "it is deprecated; the contract's tool_choice takes its place",
  prompt_cache_retention: 'the gateway cannot check what an upstream keeps',
};

/** The contract's own request fields: always taken, never listed. */
const CONTRACT_FIELDS: readonly string[] = ['model', 'messages', 'tools', 'tool_choice', 'response_format', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'stream', 'stream_options', 'n'];

/** The fields an alias takes: its own list, else the top level's. */
export function aliasRequestFields(alias: { readonly requestFields: readonly RequestFieldName[] | null }, top: readonly RequestFieldName[] = []): readonly RequestFieldName[] {
  return alias.requestFields ?? top;
}

/** A field needing another: the policy must list both, or neither. */
const NEEDS: Partial<Record<RequestFieldName, RequestFieldName>> = { top_logprobs: 'logprobs' };

/** The checked list at `o[key]` (duplicates removed, in the order given); `fallback` when absent. */
export function parseRequestFields<T>(c: Checker, o: Obj, at: string, fallback: T): readonly RequestFieldName[] | T {
  const value = o['requestFields'];
  if (value === undefined) return fallback;
  const fat = join(at, 'requestFields');
  if (!Array.isArray(value)) {
    c.report(fat, { code: 'not_array', message: 'must be an array of request field names, e.g. ["json_schema", "seed"]' });
    return fallback;
  }
  const names: RequestFieldName[] = [];
  value.forEach((entry: unknown, i: number) => {
    const eat = `${fat}[${i}]`;
    if (typeof entry === 'string' && Object.hasOwn(NEVER_ACCEPTED_FIELDS, entry)) {
      c.report(eat, { code: 'invalid_value', message: `"${entry}" cannot be accepted: ${NEVER_ACCEPTED_FIELDS[entry]}` });
      return;
    }
    if (typeof entry === 'string' && CONTRACT_FIELDS.includes(entry)) {
      c.report(eat, { code: 'invalid_value', message: `"${entry}" is in the contract's table: every alias takes it already` });
      return;
    }
    if (typeof entry === 'string' && !(REQUEST_FIELD_NAMES as readonly string[]).includes(entry)) {
      const near = didYouMean(entry, REQUEST_FIELD_NAMES);
      if (near !== null) {
        c.report(eat, { code: 'invalid_value', message: `"${entry}" is not a request field the gateway can accept; did you mean "${near}"?` });
        return;
      }
    }
    const name = c.oneOf(entry, eat, REQUEST_FIELD_NAMES);
    if (name !== undefined && !names.includes(name)) names.push(name);
  });
  for (const name of names) {
    const needed = NEEDS[name];
    if (needed !== undefined && !names.includes(needed)) {
      c.report(fat, { code: 'invalid_value', message: `"${name}" needs "${needed}" in the same list (OpenAI takes ${name} only with ${needed} true)` });
    }
  }
  return names;
}
