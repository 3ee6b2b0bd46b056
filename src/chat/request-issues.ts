// Validation issues of a chat-completion request, as data, and their wording.
// The validator and the streaming observer only say WHAT is wrong and WHERE
// ({ code, path } plus the facts the wording needs); every sentence a client
// reads is written here, in one switch per code, so the early (observer) and
// late (validator) rejection of the same fault cannot drift apart.
//
// Codes (stable; clients may switch on them):
// | code                        | when                                                        |
// |-----------------------------|-------------------------------------------------------------|
// | unknown_parameter           | a field the spec does not define at that place (rule 7);    |
// |                             | for one OpenAI defines, the message says why it is refused: |
// |                             | never taken, or not in the operator's requestFields here    |
// | unsupported_schema          | a strict json_schema outside the strict subset (src/schema) |
// | invalid_type                | wrong JSON kind; a decimal where an integer is required;    |
// |                             | null where null is not allowed; root not an object          |
// | invalid_value               | right kind, wrong value: enum, range, empty string, name    |
// |                             | pattern, image URL not https (rule 5), n != 1 (rule 2),     |
// |                             | both max fields (rule 3), stream_options without stream     |
// |                             | (rule 6), tool_choice without/unknown tool, duplicate tool  |
// |                             | name, unsupported feature (function_call), json_schema not  |
// |                             | in the operator's requestFields, metadata and               |
// |                             | logit_bias entries, top_logprobs without logprobs           |
// | missing_required_parameter  | a required field is absent (model, messages, role, content, |
// |                             | tool_call_id (rule 4), ...)                                 |
// | array_above_max_length      | messages > 256, tools > 64, stop > 4                        |
// | array_below_min_length      | messages = [], content = []                                 |
import { InvalidRequestError } from '../errors/api-error.ts';
import { renderJsonPath, type JsonValueKind } from '../json/parser.ts';

export type IssuePath = readonly (string | number)[];

export type RequestIssueCode =
  | 'unknown_parameter'
  | 'unsupported_schema'
  | 'invalid_type'
  | 'invalid_value'
  | 'missing_required_parameter'
  | 'array_above_max_length'
  | 'array_below_min_length';

export interface RequestIssue {
  code: RequestIssueCode;
  path: IssuePath;
  message: string;
}

/** What a value turned out to be: a JSON kind, or finer where the wording needs it. */
type ReceivedKind = JsonValueKind | 'decimal' | 'non-JSON value';

/** Why a value of the right kind is refused; each has its own sentence. */
export type InvalidValueReason =
  | { rule: 'one_of'; received: string; allowed: readonly string[] }
  | { rule: 'range'; received: number; minimum: number; maximum: number; integer: boolean }
  | { rule: 'non_empty' }
  | { rule: 'too_long'; maximum: number }
  | { rule: 'function_name'; received: string }
  | { rule: 'data_url' }
  | { rule: 'not_https' }
  | { rule: 'not_absolute_url' }
  | { rule: 'only_one_choice'; received: number }
  | { rule: 'exclusive_with'; other: string }
  | { rule: 'requires_stream' }
  | { rule: 'requires_tools' }
  | { rule: 'undefined_tool'; name: string }
  | { rule: 'duplicate_tool_name'; name: string }
  | { rule: 'part_not_allowed'; partType: string; role: string }
  | { rule: 'not_accepted'; refusal: FieldRefusal }
  | { rule: 'requires_logprobs' }
  | { rule: 'max_entries'; maximum: number }
  | { rule: 'token_id'; received: string }
  | { rule: 'function_call_unsupported' };

/**
 * Why a field OpenAI defines is refused: never taken by the gateway, or not
 * accepted for this model by the operator's requestFields (whose setting the
 * client is told: `requestFields`, or `aliases.<alias>.requestFields`).
 */
export type FieldRefusal =
  | { kind: 'never'; why: string }
  | { kind: 'not_accepted'; name: string; model: string | null; settings: readonly string[] };

type IssueFacts =
  | { code: 'unknown_parameter'; refusal?: FieldRefusal }
  | { code: 'unsupported_schema'; formatName: string; problem: string }
  | { code: 'invalid_type'; expected: string; received: ReceivedKind }
  | { code: 'invalid_value'; reason: InvalidValueReason }
  | { code: 'missing_required_parameter'; hint?: string }
  | { code: 'array_above_max_length'; maximum: number }
  | { code: 'array_below_min_length'; minimum: number };

/** Keys and received strings are client bytes: echo a bounded slice only. */
const ECHO_LIMIT = 64;

function echo(text: string): string {
  return text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}...` : text;
}

/**
 * `messages[3].tool_call_id`, `tools[0].function.name`; null for the request
 * itself. Segments are bounded so a megabyte-long unknown key is not echoed.
 */
function renderPath(path: IssuePath): string | null {
  return path.length === 0 ? null : renderJsonPath(path);
}

function withArticle(kind: ReceivedKind): string {
  switch (kind) {
    case 'null':
      return 'null';
    case 'array':
    case 'object':
      return `an ${kind}`;
    default:
      return `a ${kind}`;
  }
}

function listQuoted(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`;
}

function invalidValueMessage(where: string, reason: InvalidValueReason): string {
  switch (reason.rule) {
    case 'one_of':
      return `Invalid value for ${where}: '${echo(reason.received)}'. Supported values are: ${listQuoted(reason.allowed)}.`;
    case 'range':
      return `Invalid value for ${where}: ${reason.received}. Expected ${reason.integer ? 'an integer' : 'a number'} from ${reason.minimum} to ${reason.maximum}.`;
    case 'non_empty':
      return `Invalid value for ${where}: expected a non-empty string.`;
    case 'too_long':
      return `Invalid value for ${where}: expected at most ${reason.maximum} characters.`;
    case 'function_name':
      return `Invalid value for ${where}: '${echo(reason.received)}'. A function name must be 1 to 64 letters, digits, underscores or hyphens.`;
    case 'data_url':
      return `Invalid value for ${where}: data: URLs are not accepted; pass the image as an https:// URL.`;
    case 'not_https':
      return `Invalid value for ${where}: only https:// image URLs are accepted.`;
    case 'not_absolute_url':
      return `Invalid value for ${where}: expected an absolute https:// URL.`;
    case 'only_one_choice':
      return `Invalid value for ${where}: ${reason.received}. Only n = 1 is supported.`;
    case 'exclusive_with':
      return `Invalid value for ${where}: '${reason.other}' and ${where} are mutually exclusive; set only one of them.`;
    case 'requires_stream':
      return `Invalid value for ${where}: 'stream_options' is only allowed when 'stream' is true.`;
    case 'requires_tools':
      return `Invalid value for ${where}: 'tool_choice' is only allowed when 'tools' are specified.`;
    case 'undefined_tool':
      return `Invalid value for ${where}: no tool named '${echo(reason.name)}' is defined in 'tools'.`;
    case 'duplicate_tool_name':
      return `Invalid value for ${where}: the tool name '${echo(reason.name)}' is used by more than one tool; tool names must be unique.`;
    case 'part_not_allowed':
      return `Invalid value for ${where}: '${reason.partType}' content parts are not allowed in ${reason.role} messages.`;
    case 'not_accepted':
      return `Invalid value for ${where}: ${refusalSentence("'json_schema'", reason.refusal)}`;
    case 'requires_logprobs':
      return `Invalid value for ${where}: 'top_logprobs' is only allowed when 'logprobs' is true.`;
    case 'max_entries':
      return `Invalid value for ${where}: expected at most ${reason.maximum} entries.`;
    case 'token_id':
      return `Invalid value for ${where}: '${echo(reason.received)}' is not a token id; the keys of logit_bias are token ids as decimal strings, such as "50256".`;
    case 'function_call_unsupported':
      return `Invalid value for ${where}: the deprecated 'function_call' is not supported; use 'tool_calls'.`;
  }
}

/** `subject` is not accepted (and what accepts it), or is never supported (and why). */
function refusalSentence(subject: string, refusal: FieldRefusal): string {
  if (refusal.kind === 'never') return `${subject} is not supported by this gateway: ${refusal.why}.`;
  const scope = refusal.model === null ? 'by this gateway' : `for model '${echo(refusal.model)}'`;
  const settings = refusal.settings.map((s) => `"${s}"`).join(' or ');
  return `${subject} is not accepted ${scope}. The gateway's operator can accept it by adding "${refusal.name}" to ${settings} in the gateway's config.`;
}

/** The one place that turns facts into the sentence a client reads. */
function describeIssue(path: IssuePath, facts: IssueFacts): string {
  const rendered = renderPath(path);
  const where = rendered === null ? 'the request body' : `'${rendered}'`;
  switch (facts.code) {
    case 'unknown_parameter':
      if (facts.refusal !== undefined) return `Unsupported parameter: ${refusalSentence(where, facts.refusal)}`;
      return `Unrecognized request argument supplied: ${rendered ?? ''}`;
    case 'unsupported_schema':
      return `Invalid schema for response_format '${echo(facts.formatName)}': ${facts.problem}.`;
    case 'invalid_type':
      return `Invalid type for ${where}: expected ${facts.expected}, but got ${withArticle(facts.received)} instead.`;
    case 'invalid_value':
      return invalidValueMessage(where, facts.reason);
    case 'missing_required_parameter':
      return `Missing required parameter: ${where}.${facts.hint === undefined ? '' : ` ${facts.hint}`}`;
    case 'array_above_max_length':
      return `Invalid ${where}: array too long. Expected an array with at most ${facts.maximum} entries.`;
    case 'array_below_min_length':
      return `Invalid ${where}: empty array. Expected an array with at least ${facts.minimum} ${facts.minimum === 1 ? 'entry' : 'entries'}.`;
  }
}

/**
 * What the validator's one walk over a body collects beside the request:
 * the rule issues in the order they are reported, whether a value broke the
 * skeleton (request-shape.ts; then the structural pass reports instead, see
 * request-validator.ts), and the prompt bound's terms as the request is built.
 */
export interface RequestWalk {
  readonly issues: RequestIssue[];
  structural: boolean;
  /** The prompt bound so far, images apart (request-prompt-bound.ts). */
  promptTokens: number;
  imageParts: number;
}

export function createIssue(path: IssuePath, facts: IssueFacts): RequestIssue {
  return { code: facts.code, path, message: describeIssue(path, facts) };
}

/** OpenAI answers one error per request: the first issue becomes it. */
export function issueToError(issue: RequestIssue): InvalidRequestError {
  return new InvalidRequestError(issue.message, renderPath(issue.path), issue.code);
}
