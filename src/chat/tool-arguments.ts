// Whether a tool call's arguments, as an upstream streamed or sent them, are
// whole: every door that turns a chat answer's tool calls into its own items
// (Anthropic's tool_use input, the Responses API's function_call arguments)
// asks this of a call the output limit may have cut. Pure.

/** True when `args` is a whole JSON object; "" is not one (a cut call may stop before its first byte). */
export function isWholeObject(args: string): boolean {
  if (args === '') return false;
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
