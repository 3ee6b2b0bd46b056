// Validation of a chat-completion request body, already parsed from JSON.
// Spec: ../shared/spec/chat-completion-service.md, "Chat completion request",
// "Message", "Content parts" and rules 2 to 7 of POST /chat/completions.
//
// One walk builds the request. It narrows every value with a kind test (the
// skeleton of request-shape.ts) before its rules run; a body that came
// through the streaming observer (request-observer.ts) always passes those
// tests, so for it the walk is the only pass. The walk also counts the
// request's prompt bound (request-prompt-bound.ts) and carries it on the
// request, so neither the reservation nor service-auto walks again.
//
// Two kinds of issue, one answer. Structural issues (request-structure.ts) are
// the faults the observer can see while the body arrives; rule issues need the
// whole value. When any structural issue exists, those alone are reported, so
// a body rejected early and the same body rejected whole get the same param,
// code and message. The walk only notes that a value broke the skeleton; the
// structural pass then runs over the body to report them all in document
// order (an error path only). Rule issues come in document order; a message's
// role first (the rest of a message depends on it), missing required fields
// after the fields present, and the rules that relate two fields (3, 6,
// tool_choice against tools) last.
//
// OpenAI's fields beyond the contract's table (request-fields.ts) are taken
// only as the field policy allows for the request's model, which is read
// first so their rule issues keep document order.
//
// Nulls: OpenAI marks temperature, top_p, max_tokens, max_completion_tokens,
// stop, stream, stream_options and n nullable; an explicit null there (and on
// an assistant's refusal, tool_calls, audio, function_call, a tool's strict)
// means absent. model, messages, tools, tool_choice, response_format are not
// nullable. Empty tools, stop and tool_calls arrays are no-ops and are
// dropped; tool_choice "none" without tools is dropped too.
import { compileSchema, StrictSchemaError } from '../schema/compile.ts';
import { CONTRACT_ONLY, integerIn, neverAccepted, normaliseOptionalField, numberIn, relateOptionalFields, type FieldPolicy, type RequestFieldName } from './request-fields.ts';
import { createIssue, issueToError, type RequestIssue, type RequestWalk } from './request-issues.ts';
import { normaliseMessages } from './request-messages.ts';
import { carryPromptBound, REQUEST_OVERHEAD, requestTailTokens } from './request-prompt-bound.ts';
import { acceptsKind, isJsonObject, MAX_STOP_ENTRIES, OPTIONAL_FIELD_SHAPES, REQUEST_SHAPE, type ValueShape } from './request-shape.ts';
import { collectStructuralIssues } from './request-structure.ts';
import { normaliseToolChoice, normaliseTools } from './request-tools.ts';
import type { ChatMessage, ChatRequest, JsonSchemaFormat, OptionalRequestFields, ResponseFormat, ToolChoice, ToolDefinition, ValidatedChatRequest } from './types.ts';
import type { CompiledSchema } from '../schema/compile.ts';

export { createChatRequestObserver } from './request-observer.ts';

type JsonObject = Record<string, unknown>;

const REQUEST_FIELDS: ReadonlyMap<string, ValueShape> = REQUEST_SHAPE.fields ?? new Map();

/** Longer than any alias; keeps a client's model string out of error echoes at size. */
export const MAX_MODEL_LENGTH = 256;
/** Above every model's output window today; the alias caps decide the real limit. */
export const MAX_OUTPUT_TOKENS_PARAM = 1_000_000;
/** OpenAI's rule for a response format's name. */
const FORMAT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** What the walk knows of the request's model before it starts: the fields it takes. */
interface FieldScope {
  readonly policy: FieldPolicy;
  /** The body's `model` as it is (read once: the walk takes it from here). */
  readonly rawModel: unknown;
  /** `model` when it is a string, else null. */
  readonly model: string | null;
  readonly accepted: ReadonlySet<RequestFieldName>;
  /** The compiled strict schema, when there is one. */
  answerSchema?: CompiledSchema;
}

type ChatRequestCheck = { ok: true; request: ValidatedChatRequest } | { ok: false; issues: RequestIssue[] };

/**
 * The structural issues when there are any, else every rule issue, or the
 * normalised request carrying its prompt bound. Pure; never mutates `value`.
 */
export function checkChatRequest(value: unknown, policy: FieldPolicy = CONTRACT_ONLY): ChatRequestCheck {
  const walk: RequestWalk = { issues: [], structural: false, promptTokens: REQUEST_OVERHEAD, imageParts: 0 };
  if (!isJsonObject(value)) return { ok: false, issues: collectStructuralIssues(value, policy) };
  const rawModel = value['model'];
  const model = typeof rawModel === 'string' ? rawModel : null;
  const scope: FieldScope = { policy, rawModel, model, accepted: policy.acceptedFor(model ?? '') };
  const request = normaliseRequest(value, walk, scope);
  if (walk.structural || walk.issues.length > 0) {
    const structural = collectStructuralIssues(value, policy);
    if (structural.length > 0) return { ok: false, issues: structural };
    if (walk.issues.length > 0) return { ok: false, issues: walk.issues };
    // The walk marks only values the structural pass reports: a bug, never a client's fault.
    throw new Error('The request walk found a structural fault the structural pass did not.');
  }
  const validated = carryPromptBound(request, { tokens: walk.promptTokens + requestTailTokens(request), imageParts: walk.imageParts });
  if (scope.answerSchema !== undefined) Object.defineProperty(validated, 'answerSchema', { value: scope.answerSchema, enumerable: false });
  return { ok: true, request: validated };
}

/**
 * The request to forward: fresh objects holding only the fields the upstream
 * needs (the one exception: a tool's `parameters` schema is shared, read-only,
 * with `value`). Throws InvalidRequestError for the first issue: OpenAI
 * answers one error per request.
 */
export function validateChatRequest(value: unknown, policy: FieldPolicy = CONTRACT_ONLY): ValidatedChatRequest {
  const check = checkChatRequest(value, policy);
  if (!check.ok) throw issueToError(check.issues[0] as RequestIssue);
  return check.request;
}

function normaliseResponseFormat(format: JsonObject, walk: RequestWalk, scope: FieldScope): ResponseFormat | undefined {
  const issues = walk.issues;
  const type = Object.hasOwn(format, 'type') ? format['type'] : undefined;
  if (type === undefined) issues.push(createIssue(['response_format', 'type'], { code: 'missing_required_parameter' }));
  const schemaAccepted = scope.accepted.has('json_schema');
  if (type === 'json_schema' && !schemaAccepted) {
    issues.push(createIssue(['response_format', 'type'], { code: 'invalid_value', reason: { rule: 'not_accepted', refusal: scope.policy.refusal('json_schema', scope.model) } }));
    return undefined;
  }
  for (const key of Object.keys(format)) {
    if (key === 'type' || format[key] === undefined) continue;
    // json_schema goes with its type; beside another type it is unknown.
    if (key !== 'json_schema' || type !== 'json_schema') issues.push(createIssue(['response_format', key], { code: 'unknown_parameter' }));
  }
  if (type === 'text' || type === 'json_object') return { type };
  if (type === 'json_schema') return normaliseJsonSchema(format['json_schema'], walk, scope);
  if (typeof type === 'string') {
    const allowed = schemaAccepted ? ['text', 'json_object', 'json_schema'] : ['text', 'json_object'];
    issues.push(createIssue(['response_format', 'type'], { code: 'invalid_value', reason: { rule: 'one_of', received: type, allowed } }));
  } else if (type !== undefined) {
    walk.structural = true;
  }
  return undefined;
}

/** response_format.json_schema: name required; with strict true the schema must be in the strict subset, and is compiled. */
function normaliseJsonSchema(value: unknown, walk: RequestWalk, scope: FieldScope): JsonSchemaFormat | undefined {
  const at = ['response_format', 'json_schema'] as const;
  if (value === undefined) {
    walk.issues.push(createIssue(at, { code: 'missing_required_parameter' }));
    return undefined;
  }
  if (!isJsonObject(value)) {
    walk.structural = true;
    return undefined;
  }
  const out: Partial<JsonSchemaFormat['json_schema']> = {};
  for (const key of Object.keys(value)) {
    const field = value[key];
    if (field === undefined) continue;
    if (field === null) {
      // Only strict is nullable (null: absent); the structural pass reports the others.
      if (key !== 'strict') walk.structural = true;
      continue;
    }
    switch (key) {
      case 'name':
        if (typeof field !== 'string') walk.structural = true;
        else if (!FORMAT_NAME.test(field)) walk.issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'function_name', received: field } }));
        else out.name = field;
        break;
      case 'description':
        if (typeof field === 'string') out.description = field;
        else walk.structural = true;
        break;
      case 'schema':
        // Shared, read-only, with the body, like a tool's parameters.
        if (isJsonObject(field)) out.schema = field;
        else walk.structural = true;
        break;
      case 'strict':
        if (typeof field === 'boolean') out.strict = field;
        else walk.structural = true;
        break;
      // Unknown keys: the skeleton's (request-shape.ts); the structural pass reports them.
      default:
        walk.structural = true;
    }
  }
  if (value['name'] === undefined) walk.issues.push(createIssue([...at, 'name'], { code: 'missing_required_parameter' }));
  if (out.strict === true) {
    if (out.schema === undefined) {
      if (value['schema'] === undefined || value['schema'] === null) walk.issues.push(createIssue([...at, 'schema'], { code: 'missing_required_parameter', hint: 'A json_schema with strict true needs its schema.' }));
    } else {
      try {
        scope.answerSchema = compileSchema(out.schema);
      } catch (error) {
        if (!(error instanceof StrictSchemaError)) throw error;
        walk.issues.push(createIssue([...at, 'schema'], { code: 'unsupported_schema', formatName: out.name ?? '', problem: error.problem.message }));
      }
    }
  }
  return out.name === undefined ? undefined : { type: 'json_schema', json_schema: out as JsonSchemaFormat['json_schema'] };
}

/** Whether `value` is a JSON number: the kind test of every numeric field (NaN is one; the range test refuses it). */
function isNumber(value: unknown): value is number {
  return typeof value === 'number';
}

function normaliseStop(stop: unknown, walk: RequestWalk): string | string[] | undefined {
  if (typeof stop === 'string') return stop;
  if (!Array.isArray(stop) || stop.length > MAX_STOP_ENTRIES) {
    walk.structural = true;
    return undefined;
  }
  const out: string[] = [];
  for (const entry of stop) {
    if (typeof entry === 'string') out.push(entry);
    else walk.structural = true;
  }
  return out.length > 0 ? out : undefined;
}

/** One of OpenAI's optional fields: refused unless the model takes it; null is absent where OpenAI allows null. */
function normaliseOptional(key: RequestFieldName, value: unknown, shape: ValueShape, out: OptionalRequestFields, walk: RequestWalk, scope: FieldScope): void {
  if (!scope.policy.anywhere.has(key)) {
    // No model takes it: refused as the body arrived; the structural pass reports it.
    walk.structural = true;
  } else if (!scope.accepted.has(key)) {
    walk.issues.push(createIssue([key], { code: 'unknown_parameter', refusal: scope.policy.refusal(key, scope.model) }));
  } else if (value === null) {
    if (!acceptsKind(shape, 'null')) walk.structural = true;
  } else {
    normaliseOptionalField(key, value, out, walk);
  }
}

function normaliseRequest(body: JsonObject, walk: RequestWalk, scope: FieldScope): ChatRequest {
  const issues = walk.issues;
  let model: string | undefined;
  let messages: ChatMessage[] | undefined;
  let tools: ToolDefinition[] | undefined;
  let toolNames = new Set<string>();
  let toolChoice: ToolChoice | undefined;
  let toolChoiceGiven = false;
  let streamOptionsGiven = false;
  let maxTokensGiven = false;
  let maxCompletionTokensGiven = false;
  const optional: Omit<ChatRequest, 'model' | 'messages' | 'tools' | 'tool_choice'> = {};

  for (const key of Object.keys(body)) {
    const value = key === 'model' ? scope.rawModel : body[key];
    // An own property holding undefined is absent, as JSON.stringify would have it.
    if (value === undefined) continue;
    const optionalShape = OPTIONAL_FIELD_SHAPES.get(key);
    if (optionalShape !== undefined) {
      normaliseOptional(key as RequestFieldName, value, optionalShape, optional, walk, scope);
      continue;
    }
    if (neverAccepted(key) !== undefined) {
      // Refused whatever the model: the structural pass reports it.
      walk.structural = true;
      continue;
    }
    if (value === null) {
      // Only on the fields OpenAI marks nullable is null absent; elsewhere the skeleton refuses it.
      const field = REQUEST_FIELDS.get(key);
      if (field !== undefined && !acceptsKind(field, 'null')) walk.structural = true;
      else if (field === undefined) issues.push(createIssue([key], { code: 'unknown_parameter' }));
      continue;
    }
    switch (key) {
      case 'model':
        if (typeof value !== 'string') {
          walk.structural = true;
          break;
        }
        model = value;
        if (model === '') issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'non_empty' } }));
        else if (model.length > MAX_MODEL_LENGTH) issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'too_long', maximum: MAX_MODEL_LENGTH } }));
        break;
      case 'messages':
        if (Array.isArray(value)) messages = normaliseMessages(value, walk);
        else walk.structural = true;
        break;
      case 'tools':
        if (!Array.isArray(value)) walk.structural = true;
        else if (value.length > 0) ({ tools, names: toolNames } = normaliseTools(value, walk));
        break;
      case 'tool_choice':
        toolChoiceGiven = true;
        toolChoice = normaliseToolChoice(value, walk);
        break;
      case 'response_format': {
        if (!isJsonObject(value)) {
          walk.structural = true;
          break;
        }
        const format = normaliseResponseFormat(value, walk, scope);
        if (format !== undefined) optional.response_format = format;
        break;
      }
      case 'temperature':
        if (!isNumber(value)) {
          walk.structural = true;
          break;
        }
        numberIn(key, value, 0, 2, issues);
        optional.temperature = value;
        break;
      case 'top_p':
        if (!isNumber(value)) {
          walk.structural = true;
          break;
        }
        numberIn(key, value, 0, 1, issues);
        optional.top_p = value;
        break;
      case 'max_tokens':
        maxTokensGiven = true;
        if (!isNumber(value)) walk.structural = true;
        else if (integerIn(key, value, 1, MAX_OUTPUT_TOKENS_PARAM, issues)) optional.max_tokens = value;
        break;
      case 'max_completion_tokens':
        maxCompletionTokensGiven = true;
        if (!isNumber(value)) walk.structural = true;
        else if (integerIn(key, value, 1, MAX_OUTPUT_TOKENS_PARAM, issues)) optional.max_completion_tokens = value;
        break;
      case 'stop': {
        const stop = normaliseStop(value, walk);
        if (stop !== undefined) optional.stop = stop;
        break;
      }
      case 'stream':
        if (typeof value === 'boolean') optional.stream = value;
        else walk.structural = true;
        break;
      case 'stream_options': {
        streamOptionsGiven = true;
        if (!isJsonObject(value)) {
          walk.structural = true;
          break;
        }
        for (const optionKey of Object.keys(value)) {
          const include = value[optionKey];
          if (optionKey !== 'include_usage') issues.push(createIssue([key, optionKey], { code: 'unknown_parameter' }));
          else if (typeof include === 'boolean') optional.stream_options = { include_usage: include };
          else if (include !== undefined) walk.structural = true;
        }
        break;
      }
      case 'n':
        if (!isNumber(value)) {
          walk.structural = true;
          break;
        }
        // Spec rule 2: "When n is present and not 1, the request is rejected."
        if (integerIn(key, value, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, issues)) {
          if (value !== 1) issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'only_one_choice', received: value } }));
          else optional.n = 1;
        }
        break;
      default:
        // Spec rule 7.
        issues.push(createIssue([key], { code: 'unknown_parameter' }));
    }
  }
  relateOptionalFields(optional, issues);
  if (model === undefined) issues.push(createIssue(['model'], { code: 'missing_required_parameter' }));
  if (messages === undefined) issues.push(createIssue(['messages'], { code: 'missing_required_parameter' }));

  // Spec rule 3: "When both max_tokens and max_completion_tokens are present, the request is rejected."
  if (maxTokensGiven && maxCompletionTokensGiven) {
    issues.push(createIssue(['max_completion_tokens'], { code: 'invalid_value', reason: { rule: 'exclusive_with', other: 'max_tokens' } }));
  }
  // Spec rule 6: "When stream_options is given while stream is not true, the request is rejected."
  if (streamOptionsGiven && optional.stream !== true) {
    issues.push(createIssue(['stream_options'], { code: 'invalid_value', reason: { rule: 'requires_stream' } }));
  }
  if (toolChoiceGiven && tools === undefined && toolChoice !== 'none') {
    issues.push(createIssue(['tool_choice'], { code: 'invalid_value', reason: { rule: 'requires_tools' } }));
  }
  if (typeof toolChoice === 'object' && tools !== undefined && !toolNames.has(toolChoice.function.name)) {
    issues.push(createIssue(['tool_choice', 'function', 'name'], { code: 'invalid_value', reason: { rule: 'undefined_tool', name: toolChoice.function.name } }));
  }

  const request: ChatRequest = { model: model ?? '', messages: messages ?? [] };
  if (tools !== undefined) request.tools = tools;
  // Without tools, "none" is what the upstream would do anyway.
  if (toolChoice !== undefined && tools !== undefined) request.tool_choice = toolChoice;
  return Object.assign(request, optional);
}
