// The tool rules of a chat-completion request: the definitions in `tools` and
// the selection in `tool_choice`. Spec: tools is an array of at most 64
// entries whose type must be function; tool_choice is "none", "auto",
// "required" or a named-function selection. The gaps (fields of a definition
// and of a named selection) are filled from OpenAI's API. A value of a kind
// the skeleton (request-shape.ts) refuses marks the walk structural and is
// skipped: the structural pass reports it.
import { createIssue, type IssuePath, type RequestWalk } from './request-issues.ts';
import { isJsonObject, MAX_TOOLS } from './request-shape.ts';
import type { ToolChoice, ToolDefinition } from './types.ts';

type JsonObject = Record<string, unknown>;

/** OpenAI's rule for function names. */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const TOOL_CHOICE_MODES = ['none', 'auto', 'required'] as const;

function normaliseFunctionDefinition(fn: JsonObject, at: IssuePath, walk: RequestWalk, seenNames: Set<string>): ToolDefinition['function'] | undefined {
  const issues = walk.issues;
  let name: string | undefined;
  const out: Omit<ToolDefinition['function'], 'name'> = {};
  for (const key of Object.keys(fn)) {
    const value = fn[key];
    if (value === undefined) continue;
    switch (key) {
      case 'name':
        if (typeof value !== 'string') {
          walk.structural = true;
          break;
        }
        name = value;
        if (!FUNCTION_NAME.test(name)) {
          issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'function_name', received: name } }));
        } else if (seenNames.has(name)) {
          issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'duplicate_tool_name', name } }));
        }
        seenNames.add(name);
        break;
      case 'description':
        if (typeof value === 'string') out.description = value;
        else walk.structural = true;
        break;
      case 'parameters':
        // A JSON schema, shared read-only with the parsed body: its depth is
        // bounded by the parser and it is never walked here.
        if (isJsonObject(value)) out.parameters = value;
        else walk.structural = true;
        break;
      case 'strict':
        if (typeof value === 'boolean') out.strict = value;
        else if (value !== null) walk.structural = true;
        break;
      default:
        issues.push(createIssue([...at, key], { code: 'unknown_parameter' }));
    }
  }
  if (name === undefined) {
    issues.push(createIssue([...at, 'name'], { code: 'missing_required_parameter' }));
    return undefined;
  }
  return { name, ...out };
}

/** The definitions to forward and the set of names they define. */
export function normaliseTools(tools: readonly unknown[], walk: RequestWalk): { tools: ToolDefinition[]; names: Set<string> } {
  const issues = walk.issues;
  if (tools.length > MAX_TOOLS) walk.structural = true;
  const names = new Set<string>();
  const out: ToolDefinition[] = [];
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i];
    if (!isJsonObject(tool)) {
      walk.structural = true;
      continue;
    }
    const at = ['tools', i];
    let typed = false;
    let fn: ToolDefinition['function'] | undefined;
    let hasFunction = false;
    for (const key of Object.keys(tool)) {
      const value = tool[key];
      if (value === undefined) continue;
      if (key === 'type') {
        typed = true;
        if (typeof value !== 'string') walk.structural = true;
        else if (value !== 'function') {
          issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'one_of', received: value, allowed: ['function'] } }));
        }
      } else if (key === 'function') {
        hasFunction = true;
        if (isJsonObject(value)) fn = normaliseFunctionDefinition(value, [...at, key], walk, names);
        else walk.structural = true;
      } else {
        issues.push(createIssue([...at, key], { code: 'unknown_parameter' }));
      }
    }
    if (!typed) issues.push(createIssue([...at, 'type'], { code: 'missing_required_parameter' }));
    if (!hasFunction) issues.push(createIssue([...at, 'function'], { code: 'missing_required_parameter' }));
    if (fn !== undefined) out.push({ type: 'function', function: fn });
  }
  return { tools: out, names };
}

/** The selection as given, before it is checked against the defined tools. */
export function normaliseToolChoice(choice: unknown, walk: RequestWalk): ToolChoice | undefined {
  const issues = walk.issues;
  if (typeof choice === 'string') {
    const mode = TOOL_CHOICE_MODES.find((m) => m === choice);
    if (mode === undefined) {
      issues.push(createIssue(['tool_choice'], { code: 'invalid_value', reason: { rule: 'one_of', received: choice, allowed: TOOL_CHOICE_MODES } }));
    }
    return mode;
  }
  if (!isJsonObject(choice)) {
    walk.structural = true;
    return undefined;
  }
  let typed = false;
  let name: string | undefined;
  let hasFunction = false;
  for (const key of Object.keys(choice)) {
    const value = choice[key];
    if (value === undefined) continue;
    if (key === 'type') {
      typed = true;
      if (typeof value !== 'string') walk.structural = true;
      else if (value !== 'function') {
        issues.push(createIssue(['tool_choice', key], { code: 'invalid_value', reason: { rule: 'one_of', received: value, allowed: ['function'] } }));
      }
    } else if (key === 'function') {
      hasFunction = true;
      if (!isJsonObject(value)) {
        walk.structural = true;
        continue;
      }
      for (const fnKey of Object.keys(value)) {
        const fnValue = value[fnKey];
        if (fnValue === undefined) continue;
        if (fnKey !== 'name') issues.push(createIssue(['tool_choice', key, fnKey], { code: 'unknown_parameter' }));
        else if (typeof fnValue === 'string') name = fnValue;
        else walk.structural = true;
      }
      if (name === undefined) issues.push(createIssue(['tool_choice', key, 'name'], { code: 'missing_required_parameter' }));
    } else {
      issues.push(createIssue(['tool_choice', key], { code: 'unknown_parameter' }));
    }
  }
  if (!typed) issues.push(createIssue(['tool_choice', 'type'], { code: 'missing_required_parameter' }));
  if (!hasFunction) issues.push(createIssue(['tool_choice', 'function'], { code: 'missing_required_parameter' }));
  return name === undefined ? undefined : { type: 'function', function: { name } };
}
