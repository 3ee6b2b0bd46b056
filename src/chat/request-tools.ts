// The tool rules of a chat-completion request: the definitions in `tools` and
// the selection in `tool_choice`, after the structural pass. Spec: tools is
// an array of at most 64 entries whose type must be function; tool_choice is
// "none", "auto", "required" or a named-function selection. The gaps (fields
// of a definition and of a named selection) are filled from OpenAI's API.
import { createIssue, type IssuePath, type RequestIssue } from './request-issues.ts';
import type { ToolChoice, ToolDefinition } from './types.ts';

type JsonObject = Record<string, unknown>;

/** OpenAI's rule for function names. */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const TOOL_CHOICE_MODES = ['none', 'auto', 'required'] as const;

function normaliseFunctionDefinition(
  fn: JsonObject,
  at: IssuePath,
  issues: RequestIssue[],
  seenNames: Set<string>,
): ToolDefinition['function'] | undefined {
  let name: string | undefined;
  const out: Omit<ToolDefinition['function'], 'name'> = {};
  for (const key of Object.keys(fn)) {
    const value = fn[key];
    if (value === undefined) continue;
    switch (key) {
      case 'name':
        name = value as string;
        if (!FUNCTION_NAME.test(name)) {
          issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'function_name', received: name } }));
        } else if (seenNames.has(name)) {
          issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'duplicate_tool_name', name } }));
        }
        seenNames.add(name);
        break;
      case 'description':
        out.description = value as string;
        break;
      case 'parameters':
        // A JSON schema, shared read-only with the parsed body: its depth is
        // bounded by the parser and it is never walked here.
        out.parameters = value as Record<string, unknown>;
        break;
      case 'strict':
        if (value !== null) out.strict = value as boolean;
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
export function normaliseTools(tools: readonly unknown[], issues: RequestIssue[]): { tools: ToolDefinition[]; names: Set<string> } {
  const names = new Set<string>();
  const out: ToolDefinition[] = [];
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i] as JsonObject;
    const at = ['tools', i];
    let typed = false;
    let fn: ToolDefinition['function'] | undefined;
    let hasFunction = false;
    for (const key of Object.keys(tool)) {
      const value = tool[key];
      if (value === undefined) continue;
      if (key === 'type') {
        typed = true;
        if (value !== 'function') {
          issues.push(createIssue([...at, key], { code: 'invalid_value', reason: { rule: 'one_of', received: value as string, allowed: ['function'] } }));
        }
      } else if (key === 'function') {
        hasFunction = true;
        fn = normaliseFunctionDefinition(value as JsonObject, [...at, key], issues, names);
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
export function normaliseToolChoice(choice: string | JsonObject, issues: RequestIssue[]): ToolChoice | undefined {
  if (typeof choice === 'string') {
    const mode = TOOL_CHOICE_MODES.find((m) => m === choice);
    if (mode === undefined) {
      issues.push(createIssue(['tool_choice'], { code: 'invalid_value', reason: { rule: 'one_of', received: choice, allowed: TOOL_CHOICE_MODES } }));
    }
    return mode;
  }
  let typed = false;
  let name: string | undefined;
  let hasFunction = false;
  for (const key of Object.keys(choice)) {
    const value = choice[key];
    if (value === undefined) continue;
    if (key === 'type') {
      typed = true;
      if (value !== 'function') {
        issues.push(
          createIssue(['tool_choice', key], { code: 'invalid_value', reason: { rule: 'one_of', received: value as string, allowed: ['function'] } }),
        );
      }
    } else if (key === 'function') {
      hasFunction = true;
      const fn = value as JsonObject;
      for (const fnKey of Object.keys(fn)) {
        if (fn[fnKey] === undefined) continue;
        if (fnKey === 'name') name = fn[fnKey] as string;
        else issues.push(createIssue(['tool_choice', key, fnKey], { code: 'unknown_parameter' }));
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
