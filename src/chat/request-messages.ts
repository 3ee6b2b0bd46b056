// The message rules of a chat-completion request (spec: Message and Content
// parts tables, rules 4 and 5). Builds the forwarded messages: only the
// fields the upstream needs, in fresh objects; what SDK tool loops echo back
// from a response (annotations, audio, function_call: null, reasoning_content,
// parsed, parsed_arguments) is accepted and dropped. A value of a kind the
// skeleton (request-shape.ts) refuses marks the walk structural and is
// skipped: the structural pass reports it. Each forwarded string is counted
// into the prompt bound as it is kept (request-prompt-bound.ts).
import { createIssue, type InvalidValueReason, type IssuePath, type RequestWalk } from './request-issues.ts';
import { MESSAGE_OVERHEAD, TEXT_PART_TOKENS, textTokens, TOOL_CALL_TOKENS } from './request-prompt-bound.ts';
import { isJsonObject, jsonKindOf, MAX_MESSAGES } from './request-shape.ts';
import type { ChatMessage, ContentPart, Role, ToolCall } from './types.ts';

type JsonObject = Record<string, unknown>;

const ROLES: readonly Role[] = ['system', 'developer', 'user', 'assistant', 'tool'];

/** OpenAI's message definitions, per role. */
function roleAllowsField(role: Role, field: string): boolean {
  switch (role) {
    case 'system':
    case 'developer':
    case 'user':
      return field === 'content' || field === 'name';
    case 'tool':
      // name: LangChain's ToolMessage (and LangGraph's ToolNode) always send it;
      // accepted, never forwarded, as OpenAI's tool message has no such field.
      return field === 'content' || field === 'tool_call_id' || field === 'name';
    case 'assistant':
      switch (field) {
        case 'content':
        case 'name':
        case 'tool_calls':
        case 'refusal':
        case 'annotations':
        case 'audio':
        case 'function_call':
        case 'reasoning_content':
        case 'parsed':
          return true;
        default:
          return false;
      }
  }
}

const PART_TYPES = ['text', 'image_url', 'refusal'] as const;
type PartType = (typeof PART_TYPES)[number];

function partTypesFor(role: Role): readonly PartType[] {
  switch (role) {
    case 'user':
      return ['text', 'image_url'];
    case 'assistant':
      return ['text', 'refusal'];
    default:
      return ['text'];
  }
}

const IMAGE_DETAILS = ['auto', 'low', 'high'] as const;

function own(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/**
 * Spec rule 5: "When an image_url uses a data: URL or a non-HTTPS URL, the
 * request is rejected." The URL is forwarded as the client wrote it.
 */
function imageUrlFault(url: string): InvalidValueReason | undefined {
  if (url.trimStart().slice(0, 5).toLowerCase() === 'data:') return { rule: 'data_url' };
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    return { rule: 'not_absolute_url' };
  }
  return protocol === 'https:' ? undefined : { rule: 'not_https' };
}

function normaliseImageUrl(image: JsonObject, at: IssuePath, walk: RequestWalk): ContentPart | undefined {
  const issues = walk.issues;
  let url: string | undefined;
  let detail: (typeof IMAGE_DETAILS)[number] | undefined;
  for (const key of Object.keys(image)) {
    const value = image[key];
    if (value === undefined) continue;
    if (key !== 'url' && key !== 'detail') {
      issues.push(createIssue([...at, key], { code: 'unknown_parameter' }));
    } else if (typeof value !== 'string') {
      walk.structural = true;
    } else if (key === 'url') {
      url = value;
      const fault = imageUrlFault(url);
      if (fault !== undefined) issues.push(createIssue([...at, key], { code: 'invalid_value', reason: fault }));
    } else {
      const found = IMAGE_DETAILS.find((d) => d === value);
      if (found === undefined) {
        issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'one_of', received: value, allowed: IMAGE_DETAILS } }));
      }
      detail = found;
    }
  }
  if (url === undefined) {
    issues.push(createIssue([...at, 'url'], { code: 'missing_required_parameter' }));
    return undefined;
  }
  return { type: 'image_url', image_url: detail === undefined ? { url } : { url, detail } };
}

/**
 * Parts keep their text; refusal parts (assistant only) are returned through
 * `refusals`. Adds the kept parts to the prompt bound.
 */
function normaliseParts(parts: readonly unknown[], role: Role, at: IssuePath, walk: RequestWalk, refusals: string[]): ContentPart[] {
  const issues = walk.issues;
  if (parts.length === 0) issues.push(createIssue(at, { code: 'array_below_min_length', minimum: 1 }));
  const out: ContentPart[] = [];
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j];
    if (!isJsonObject(part)) {
      walk.structural = true;
      continue;
    }
    const partAt = [...at, j];
    const type = own(part, 'type');
    if (type === undefined) {
      issues.push(createIssue([...partAt, 'type'], { code: 'missing_required_parameter' }));
      continue;
    }
    if (typeof type !== 'string') {
      walk.structural = true;
      continue;
    }
    const allowed = partTypesFor(role);
    const known = PART_TYPES.find((t) => t === type);
    if (known === undefined || !allowed.includes(known)) {
      const reason: InvalidValueReason = known === undefined ? { rule: 'one_of', received: type, allowed } : { rule: 'part_not_allowed', partType: known, role };
      issues.push(createIssue([...partAt, 'type'], { code: 'invalid_value', reason }));
      continue;
    }
    // The one field that carries the part's payload is named after its type.
    let payload: unknown;
    for (const key of Object.keys(part)) {
      if (key === 'type') continue;
      const value = part[key];
      if (value === undefined) continue;
      if (key === known) payload = value;
      else issues.push(createIssue([...partAt, key], { code: 'unknown_parameter' }));
    }
    if (payload === undefined) {
      issues.push(createIssue([...partAt, known], { code: 'missing_required_parameter' }));
      continue;
    }
    if (known === 'image_url') {
      if (!isJsonObject(payload)) {
        walk.structural = true;
        continue;
      }
      const image = normaliseImageUrl(payload, [...partAt, known], walk);
      if (image !== undefined) {
        out.push(image);
        walk.imageParts++;
      }
    } else if (typeof payload !== 'string') {
      walk.structural = true;
    } else if (known === 'text') {
      out.push({ type: 'text', text: payload });
      walk.promptTokens += TEXT_PART_TOKENS + textTokens(payload);
    } else {
      refusals.push(payload);
    }
  }
  return out;
}

/** Adds the kept calls to the prompt bound. */
function normaliseToolCalls(calls: readonly unknown[], at: IssuePath, walk: RequestWalk): ToolCall[] {
  const issues = walk.issues;
  const out: ToolCall[] = [];
  for (let j = 0; j < calls.length; j++) {
    const call = calls[j];
    if (!isJsonObject(call)) {
      walk.structural = true;
      continue;
    }
    const callAt = [...at, j];
    let id: string | undefined;
    let typed = false;
    let fn: { name: string; arguments: string } | undefined;
    for (const key of Object.keys(call)) {
      const value = call[key];
      if (value === undefined) continue;
      switch (key) {
        case 'id':
          if (typeof value !== 'string') {
            walk.structural = true;
            break;
          }
          id = value;
          if (id === '') issues.push(createIssue([...callAt, key], { code: 'invalid_value', reason: { rule: 'non_empty' } }));
          break;
        case 'type':
          typed = true;
          if (typeof value !== 'string') walk.structural = true;
          else if (value !== 'function') {
            issues.push(createIssue([...callAt, key], { code: 'invalid_value', reason: { rule: 'one_of', received: value, allowed: ['function'] } }));
          }
          break;
        case 'function':
          if (isJsonObject(value)) fn = normaliseCalledFunction(value, [...callAt, key], walk);
          else walk.structural = true;
          break;
        default:
          issues.push(createIssue([...callAt, key], { code: 'unknown_parameter' }));
      }
    }
    if (id === undefined) issues.push(createIssue([...callAt, 'id'], { code: 'missing_required_parameter' }));
    if (!typed) issues.push(createIssue([...callAt, 'type'], { code: 'missing_required_parameter' }));
    if (!Object.hasOwn(call, 'function')) issues.push(createIssue([...callAt, 'function'], { code: 'missing_required_parameter' }));
    if (id !== undefined && fn !== undefined) {
      out.push({ id, type: 'function', function: fn });
      walk.promptTokens += textTokens(id) + TOOL_CALL_TOKENS + textTokens(fn.name) + textTokens(fn.arguments);
    }
  }
  return out;
}

function normaliseCalledFunction(fn: JsonObject, at: IssuePath, walk: RequestWalk): { name: string; arguments: string } | undefined {
  const issues = walk.issues;
  let name: string | undefined;
  let args: string | undefined;
  for (const key of Object.keys(fn)) {
    const value = fn[key];
    if (value === undefined) continue;
    if (key === 'parsed_arguments') {
      // The SDKs' parse of `arguments`, echoed back; not forwarded.
      if (jsonKindOf(value) === undefined) walk.structural = true;
    } else if (key !== 'name' && key !== 'arguments') {
      issues.push(createIssue([...at, key], { code: 'unknown_parameter' }));
    } else if (typeof value !== 'string') {
      walk.structural = true;
    } else if (key === 'name') {
      name = value;
      if (name === '') issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'non_empty' } }));
    } else {
      args = value;
    }
  }
  if (name === undefined) issues.push(createIssue([...at, 'name'], { code: 'missing_required_parameter' }));
  if (args === undefined) issues.push(createIssue([...at, 'arguments'], { code: 'missing_required_parameter' }));
  return name === undefined || args === undefined ? undefined : { name, arguments: args };
}

/** Whether `value`, of a field the message drops, is of a kind the skeleton allows. */
function droppedFieldFits(key: string, value: unknown): boolean {
  switch (key) {
    case 'annotations':
      return Array.isArray(value);
    case 'audio':
      return value === null || isJsonObject(value);
    case 'reasoning_content':
      return value === null || typeof value === 'string';
    default:
      // parsed: any JSON value.
      return jsonKindOf(value) !== undefined;
  }
}

function normaliseMessage(message: JsonObject, at: IssuePath, walk: RequestWalk): ChatMessage | undefined {
  const issues = walk.issues;
  // Every other rule of a message depends on its role, so the role comes first.
  const rawRole = own(message, 'role');
  if (rawRole === undefined) {
    issues.push(createIssue([...at, 'role'], { code: 'missing_required_parameter' }));
    return undefined;
  }
  if (typeof rawRole !== 'string') {
    walk.structural = true;
    return undefined;
  }
  const role = ROLES.find((r) => r === rawRole);
  if (role === undefined) {
    issues.push(createIssue([...at, 'role'], { code: 'invalid_value', reason: { rule: 'one_of', received: rawRole, allowed: ROLES } }));
    return undefined;
  }

  const out: ChatMessage = { role };
  // The role is one of ROLES: ASCII, a byte per character.
  let tokens = MESSAGE_OVERHEAD + role.length;
  const refusals: string[] = [];
  let contentSeen = false;
  let hasContent = false;
  let hasToolCallId = false;
  for (const key of Object.keys(message)) {
    if (key === 'role') continue;
    const value = message[key];
    if (value === undefined) continue;
    if (!roleAllowsField(role, key)) {
      issues.push(createIssue([...at, key], { code: 'unknown_parameter' }));
      continue;
    }
    switch (key) {
      case 'content':
        contentSeen = true;
        if (value === null) {
          if (role !== 'assistant') {
            issues.push(createIssue([...at, key], { code: 'invalid_type', expected: 'a string or an array of content parts', received: 'null' }));
          }
        } else if (typeof value === 'string') {
          hasContent = true;
          out.content = value;
          tokens += textTokens(value);
        } else if (Array.isArray(value)) {
          hasContent = true;
          const parts = normaliseParts(value, role, [...at, key], walk, refusals);
          // An assistant message whose parts were all refusals says nothing but its refusal.
          if (parts.length > 0 || role !== 'assistant') out.content = parts;
        } else {
          walk.structural = true;
        }
        break;
      case 'name':
        if (typeof value !== 'string') walk.structural = true;
        else if (role !== 'tool') {
          out.name = value;
          tokens += textTokens(value);
        }
        break;
      case 'tool_call_id':
        hasToolCallId = true;
        if (typeof value !== 'string') {
          walk.structural = true;
          break;
        }
        out.tool_call_id = value;
        tokens += textTokens(value);
        if (value === '') issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'non_empty' } }));
        break;
      case 'tool_calls':
        if (Array.isArray(value)) {
          if (value.length > 0) out.tool_calls = normaliseToolCalls(value, [...at, key], walk);
        } else if (value !== null) {
          walk.structural = true;
        }
        break;
      case 'refusal':
        if (typeof value === 'string') out.refusal = value;
        else if (value !== null) walk.structural = true;
        break;
      case 'function_call':
        if (isJsonObject(value)) issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'function_call_unsupported' } }));
        else if (value !== null) walk.structural = true;
        break;
      default:
        // annotations, audio, reasoning_content, parsed: accepted from echoed responses, not forwarded.
        if (!droppedFieldFits(key, value)) walk.structural = true;
    }
  }

  if (refusals.length > 0 && out.refusal === undefined) out.refusal = refusals.join('\n');
  if (typeof out.refusal === 'string') tokens += textTokens(out.refusal);
  if (role === 'assistant') {
    if (out.content === undefined) out.content = null;
    // OpenAI: content is "required unless tool_calls or function_call is specified".
    const saysSomething = hasContent || out.tool_calls !== undefined || out.refusal !== undefined;
    if (!saysSomething) {
      issues.push(
        createIssue([...at, 'content'], { code: 'missing_required_parameter', hint: 'An assistant message needs content unless it has tool_calls or a refusal.' }),
      );
    }
  } else if (!contentSeen) {
    issues.push(createIssue([...at, 'content'], { code: 'missing_required_parameter' }));
  }
  // Spec rule 4: "When a message has role tool and lacks tool_call_id, the request is rejected."
  if (role === 'tool' && !hasToolCallId) issues.push(createIssue([...at, 'tool_call_id'], { code: 'missing_required_parameter' }));
  walk.promptTokens += tokens;
  return out;
}

/** Spec: messages is an array of message, length 1 to 256. */
export function normaliseMessages(messages: readonly unknown[], walk: RequestWalk): ChatMessage[] {
  if (messages.length === 0) walk.issues.push(createIssue(['messages'], { code: 'array_below_min_length', minimum: 1 }));
  if (messages.length > MAX_MESSAGES) walk.structural = true;
  const out: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isJsonObject(message)) {
      walk.structural = true;
      continue;
    }
    const normalised = normaliseMessage(message, ['messages', i], walk);
    if (normalised !== undefined) out.push(normalised);
  }
  return out;
}
