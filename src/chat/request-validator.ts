// Validation of a chat-completion request body, already parsed from JSON.
// Spec: ../shared/spec/chat-completion-service.md, "Chat completion request",
// "Message", "Content parts" and rules 2 to 7 of POST /chat/completions.
//
// Two passes, one answer. The structural pass (request-structure.ts) finds
// the faults the streaming observer (request-observer.ts) can see while the
// body arrives; only when there are none does the rule pass below run, with
// every kind already vouched for. The first issue of the first failing pass
// becomes the error, so a body rejected early and the same body rejected
// whole get the same param, code and message. Within a pass issues come in
// document order; a message's role first (the rest of a message depends on
// it), missing required fields after the fields present, and the rules that
// relate two fields (3, 6, tool_choice against tools) last.
//
// Nulls: OpenAI marks temperature, top_p, max_tokens, max_completion_tokens,
// stop, stream, stream_options and n nullable; an explicit null there (and on
// an assistant's refusal, tool_calls, audio, function_call, a tool's strict)
// means absent. model, messages, tools, tool_choice, response_format are not
// nullable. Empty tools, stop and tool_calls arrays are no-ops and are
// dropped; tool_choice "none" without tools is dropped too.
import { createIssue, issueToError, type RequestIssue } from './request-issues.ts';
import { normaliseMessages } from './request-messages.ts';
import { REQUEST_SHAPE } from './request-shape.ts';
import { collectStructuralIssues } from './request-structure.ts';
import { normaliseToolChoice, normaliseTools } from './request-tools.ts';
import type { ChatMessage, ChatRequest, ToolChoice, ToolDefinition } from './types.ts';

export { createChatRequestObserver } from './request-observer.ts';

type JsonObject = Record<string, unknown>;

const REQUEST_FIELDS: ReadonlyMap<string, unknown> = REQUEST_SHAPE.fields ?? new Map();

/** Longer than any alias; keeps a client's model string out of error echoes at size. */
const MAX_MODEL_LENGTH = 256;
/** Above every model's output window today; the alias caps decide the real limit. */
const MAX_OUTPUT_TOKENS_PARAM = 1_000_000;

type ChatRequestCheck = { ok: true; request: ChatRequest } | { ok: false; issues: RequestIssue[] };

/** Every issue of the first failing pass, or the normalised request. Pure; never mutates `value`. */
export function checkChatRequest(value: unknown): ChatRequestCheck {
  const structural = collectStructuralIssues(value);
  if (structural.length > 0) return { ok: false, issues: structural };
  const issues: RequestIssue[] = [];
  const request = normaliseRequest(value as JsonObject, issues);
  return issues.length > 0 ? { ok: false, issues } : { ok: true, request };
}

/**
 * The request to forward: fresh objects holding only the fields the upstream
 * needs (the one exception: a tool's `parameters` schema is shared, read-only,
 * with `value`). Throws InvalidRequestError for the first issue: OpenAI
 * answers one error per request.
 */
export function validateChatRequest(value: unknown): ChatRequest {
  const check = checkChatRequest(value);
  if (!check.ok) throw issueToError(check.issues[0] as RequestIssue);
  return check.request;
}

function checkRange(key: string, value: number, minimum: number, maximum: number, issues: RequestIssue[]): void {
  // Written so that NaN (possible from a JavaScript caller, never from JSON) fails too.
  if (!(value >= minimum && value <= maximum)) {
    issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'range', received: value, minimum, maximum, integer: false } }));
  }
}

function checkInteger(key: string, value: number, minimum: number, maximum: number, issues: RequestIssue[]): boolean {
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

function normaliseResponseFormat(format: JsonObject, issues: RequestIssue[]): ChatRequest['response_format'] {
  const type = Object.hasOwn(format, 'type') ? format['type'] : undefined;
  if (type === undefined) issues.push(createIssue(['response_format', 'type'], { code: 'missing_required_parameter' }));
  for (const key of Object.keys(format)) {
    if (key === 'type' || format[key] === undefined) continue;
    // json_schema is refused through its type; beside another type it is just unknown.
    if (key !== 'json_schema' || type !== 'json_schema') issues.push(createIssue(['response_format', key], { code: 'unknown_parameter' }));
  }
  if (type === 'text' || type === 'json_object') return { type };
  if (type === 'json_schema') {
    issues.push(createIssue(['response_format', 'type'], { code: 'invalid_value', reason: { rule: 'json_schema_unsupported' } }));
  } else if (type !== undefined) {
    issues.push(
      createIssue(['response_format', 'type'], {
        code: 'invalid_value',
        reason: { rule: 'one_of', received: type as string, allowed: ['text', 'json_object'] },
      }),
    );
  }
  return undefined;
}

function normaliseRequest(body: JsonObject, issues: RequestIssue[]): ChatRequest {
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
    const value = body[key];
    // An own property holding undefined, or an explicit null where the structural
    // pass let one through (only on the fields OpenAI marks nullable): absent.
    if (value === undefined || (value === null && REQUEST_FIELDS.has(key))) continue;
    switch (key) {
      case 'model':
        model = value as string;
        if (model === '') issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'non_empty' } }));
        else if (model.length > MAX_MODEL_LENGTH) issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'too_long', maximum: MAX_MODEL_LENGTH } }));
        break;
      case 'messages':
        messages = normaliseMessages(value as unknown[], issues);
        break;
      case 'tools':
        if ((value as unknown[]).length > 0) ({ tools, names: toolNames } = normaliseTools(value as unknown[], issues));
        break;
      case 'tool_choice':
        toolChoiceGiven = true;
        toolChoice = normaliseToolChoice(value as string | JsonObject, issues);
        break;
      case 'response_format': {
        const format = normaliseResponseFormat(value as JsonObject, issues);
        if (format !== undefined) optional.response_format = format;
        break;
      }
      case 'temperature':
        checkRange(key, value as number, 0, 2, issues);
        optional.temperature = value as number;
        break;
      case 'top_p':
        checkRange(key, value as number, 0, 1, issues);
        optional.top_p = value as number;
        break;
      case 'max_tokens':
        maxTokensGiven = true;
        if (checkInteger(key, value as number, 1, MAX_OUTPUT_TOKENS_PARAM, issues)) optional.max_tokens = value as number;
        break;
      case 'max_completion_tokens':
        maxCompletionTokensGiven = true;
        if (checkInteger(key, value as number, 1, MAX_OUTPUT_TOKENS_PARAM, issues)) optional.max_completion_tokens = value as number;
        break;
      case 'stop':
        if (typeof value === 'string') optional.stop = value;
        else if ((value as string[]).length > 0) optional.stop = [...(value as string[])];
        break;
      case 'stream':
        optional.stream = value as boolean;
        break;
      case 'stream_options': {
        streamOptionsGiven = true;
        const options = value as JsonObject;
        for (const optionKey of Object.keys(options)) {
          const include = options[optionKey];
          if (optionKey !== 'include_usage') issues.push(createIssue([key, optionKey], { code: 'unknown_parameter' }));
          else if (typeof include === 'boolean') optional.stream_options = { include_usage: include };
        }
        break;
      }
      case 'n':
        // Spec rule 2: "When n is present and not 1, the request is rejected."
        if (checkInteger(key, value as number, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, issues)) {
          if (value !== 1) issues.push(createIssue([key], { code: 'invalid_value', reason: { rule: 'only_one_choice', received: value as number } }));
          else optional.n = 1;
        }
        break;
      default:
        // Spec rule 7. Only keys the structural pass leaves to this one get here.
        issues.push(createIssue([key], { code: 'unknown_parameter' }));
    }
  }

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
