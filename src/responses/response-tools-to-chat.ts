// The tools of a Responses request and its tool_choice, for an upstream
// speaking only chat completions (./response-to-chat.ts says what is left out
// of the offer and why; ./tool-names.ts makes the namespace functions' names).
import type { ChatRequest, ToolChoice, ToolDefinition } from '../chat/types.ts';
import type { NamespacedNames } from './tool-names.ts';

type JsonObject = Record<string, unknown>;
type Path = ReadonlyArray<string | number>;

/** Where the translation notes what it refuses and what it leaves out (by the size of its JSON). */
export interface TranslationNotes {
  refuse(path: Path, what: string): void;
  leaveOut(value: unknown): void;
}

/** Names used without a namespace (tools offered, earlier calls): reserved before any namespaced name is made. */
export function plainFunctionNames(tools: JsonObject[] | undefined, items: JsonObject[]): string[] {
  const out: string[] = [];
  for (const tool of tools ?? []) if (tool['type'] === 'function') out.push(tool['name'] as string);
  for (const item of items) if (item['type'] === 'function_call' && item['namespace'] === undefined) out.push(item['name'] as string);
  return out;
}

export function translateTools(tools: JsonObject[], names: NamespacedNames, leftOut: string[], t: TranslationNotes): ToolDefinition[] {
  const out: ToolDefinition[] = [];
  for (const tool of tools) {
    const type = tool['type'] as string;
    if (type === 'function') {
      offerFunction(tool, tool['name'] as string, tool['name'] as string, out, leftOut, t);
    } else if (type === 'namespace') {
      const namespace = tool['name'] as string;
      for (const member of tool['tools'] as JsonObject[]) {
        const shown = `${namespace}.${member['name'] as string}`;
        if (member['type'] === 'function') offerFunction(member, names.chatName(namespace, member['name'] as string), shown, out, leftOut, t);
        else {
          leftOut.push(shown);
          t.leaveOut(member);
        }
      }
    } else {
      // A hosted tool (by its type) or a custom tool (by its name): nothing a chat upstream can offer.
      leftOut.push(type === 'custom' ? (tool['name'] as string) : type);
      t.leaveOut(tool);
    }
  }
  return out;
}

function offerFunction(tool: JsonObject, chatName: string, shown: string, out: ToolDefinition[], leftOut: string[], t: TranslationNotes): void {
  if (tool['defer_loading'] === true) {
    // Only tool search (a hosted tool) loads it: a chat upstream never would.
    leftOut.push(shown);
    t.leaveOut(tool);
    return;
  }
  const fn: ToolDefinition['function'] = { name: chatName };
  if (typeof tool['description'] === 'string') fn.description = tool['description'];
  if (tool['parameters'] !== undefined && tool['parameters'] !== null) fn.parameters = tool['parameters'] as JsonObject;
  if (typeof tool['strict'] === 'boolean') fn.strict = tool['strict'];
  out.push({ type: 'function', function: fn });
}

export function translateToolChoice(choice: string | JsonObject, request: ChatRequest, names: NamespacedNames, t: TranslationNotes): void {
  const tools = request.tools;
  if (typeof choice === 'string') {
    if (tools !== undefined) request.tool_choice = choice as ToolChoice;
    else if (choice === 'required') t.refuse(['tool_choice'], "tool_choice 'required' without a function tool to call (every tool offered is left out)");
    return;
  }
  const type = choice['type'];
  if (type === 'function') {
    const name = choice['name'] as string;
    const chatName = offeredName(tools, name, names);
    if (chatName === undefined) t.refuse(['tool_choice', 'name'], `a tool_choice naming '${name}', which is left out of the offer`);
    else request.tool_choice = { type: 'function', function: { name: chatName } };
    return;
  }
  if (type === 'allowed_tools') {
    const allowed = new Set<string>();
    for (const entry of choice['tools'] as JsonObject[]) {
      if (entry['type'] !== 'function' || typeof entry['name'] !== 'string') continue;
      allowed.add(typeof entry['namespace'] === 'string' ? names.chatName(entry['namespace'], entry['name']) : entry['name']);
    }
    const kept = (tools ?? []).filter((tool) => allowed.has(tool.function.name));
    if (kept.length > 0) {
      request.tools = kept;
      request.tool_choice = choice['mode'] as 'auto' | 'required';
    } else {
      delete request.tools;
      if (choice['mode'] === 'required') t.refuse(['tool_choice', 'tools'], "an allowed_tools tool_choice of mode 'required' that allows no function tool offered");
    }
    return;
  }
  t.refuse(['tool_choice'], `a tool_choice of type '${String(type)}' (a tool left out of the offer)`);
}

/** The chat name a tool_choice's function name has in the offer: a plain function's, or the one namespace function of that name. */
function offeredName(tools: ToolDefinition[] | undefined, name: string, names: NamespacedNames): string | undefined {
  if (tools === undefined) return undefined;
  if (tools.some((tool) => tool.function.name === name)) return name;
  let found: string | undefined;
  for (const [chatName, fn] of names.byChatName) {
    if (fn.name !== name || !tools.some((tool) => tool.function.name === chatName)) continue;
    if (found !== undefined) return undefined;
    found = chatName;
  }
  return found;
}
