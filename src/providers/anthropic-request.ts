// A validated OpenAI chat request → an Anthropic Messages API request body.
// Pure: data in, data out. The rule: never send a request Anthropic is known
// to refuse, and never change a request's meaning silently; a request that has
// no faithful translation is a 400 naming the parameter, before anything is
// sent. The messages are translated by ./anthropic-conversation.ts; the list
// of rules is in docs/config.md ("Provider type anthropic").
// Wire format: https://docs.anthropic.com/en/api/messages
//
// Decisions here (each is also pinned by a test):
// - temperature above 1 is a 400, never clamped: Anthropic accepts 0 to 1.
// - temperature and top_p together: Claude models since Opus 4.1 refuse both
//   ("temperature and top_p cannot both be specified for this model"), and
//   Anthropic's reference says to alter one, not both. top_p 1 (no nucleus
//   cut) and temperature 1 (Anthropic's default) change nothing, so such a
//   value is left out; any other pair is a 400 naming top_p.
// - A stop sequence that is empty or whitespace only is a 400 naming it:
//   Anthropic refuses it, and dropping it would let the answer run past it.
// - response_format json_object is a 400: Anthropic has no JSON mode, and a
//   prompt instruction would promise what the gateway cannot guarantee.
// - A tool's parameters schema without `type` gets type "object" (function
//   arguments are always an object); another type is a 400.
// - `name` on a message and `detail` on an image have no Anthropic equivalent
//   and are dropped; an assistant `refusal` is sent as the assistant's text.
// - response_format json_schema is Anthropic's structured outputs
//   (output_config.format), translated by ./anthropic-output-schema.ts.
// - user and safety_identifier are metadata.user_id; parallel_tool_calls false
//   is tool_choice.disable_parallel_tool_use; OpenAI's other optional fields
//   have no equivalent (./anthropic-request-fields.ts).

import type { ChatRequest, ToolChoice, ToolDefinition } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';
import { type AnthropicMessage, type AnthropicTextBlock, isBlank, toAnthropicConversation } from './anthropic-conversation.ts';
import { type AnthropicOutputFormat, toAnthropicOutputFormat } from './anthropic-output-schema.ts';
import { checkUnsupportedFields, UNSUPPORTED_FIELD_RULES, userIdOf } from './anthropic-request-fields.ts';
import type { RequestRestriction } from './request-restriction.ts';

export type { AnthropicContentBlock, AnthropicMessage, AnthropicTextBlock } from './anthropic-conversation.ts';

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

/** disable_parallel_tool_use: at most one tool call in the answer (OpenAI's parallel_tool_calls false). */
export type AnthropicToolChoice =
  | { type: 'none' }
  | { type: 'auto'; disable_parallel_tool_use?: true }
  | { type: 'any'; disable_parallel_tool_use?: true }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: true };

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  system?: AnthropicTextBlock[];
  messages: AnthropicMessage[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  output_config?: { format: AnthropicOutputFormat };
  metadata?: { user_id: string };
  stream?: boolean;
}

/** What this translation refuses (a 400) that a provider taking OpenAI's
 * shapes as they are would take: check-config names these when an alias mixes
 * the two (../providers/request-restrictions.ts). One line per rule above and
 * in ./anthropic-conversation.ts. */
export const ANTHROPIC_REFUSES: readonly RequestRestriction[] = [
  ...[
    'response_format {"type": "json_object"}',
    'a blank stop entry such as "\\n"',
    'temperature above 1',
    'temperature and top_p together',
    'a tool whose parameters have a type other than "object"',
    "messages that end with the assistant's, or hold no user message or a blank one",
  ].map((rule) => ({ rule, fields: [] })),
  {
    rule: 'response_format json_schema with a recursive schema, or without "strict": true one with bounds Anthropic does not take (minimum, maxItems, pattern, ...)',
    fields: ['json_schema'],
  },
  ...UNSUPPORTED_FIELD_RULES,
];

/** Anthropic requires max_tokens; the gateway always sets one, and this is the
 * spec's default for when neither field is set. */
const DEFAULT_MAX_TOKENS = 4096;
/** Anthropic's temperature range is 0 to 1 (OpenAI's is 0 to 2). */
const MAX_TEMPERATURE = 1;
/** Anthropic's documented default temperature. */
const DEFAULT_TEMPERATURE = 1;
/** Nucleus sampling over the whole distribution: no cut at all. */
const NO_NUCLEUS_CUT = 1;

/** The Anthropic request body for `req`. Throws InvalidRequestError (400). */
export function toAnthropicRequest(req: ChatRequest): AnthropicRequest {
  checkSupported(req);
  checkUnsupportedFields(req);
  const sampling = samplingOf(req);
  const stop = stopSequencesOf(req);
  const tools = req.tools !== undefined && req.tools.length > 0 ? req.tools.map(toAnthropicTool) : undefined;
  const toolChoice = toolChoiceOf(req, tools !== undefined);
  const format = req.response_format?.type === 'json_schema' ? toAnthropicOutputFormat(req.response_format) : undefined;
  const userId = userIdOf(req);
  const conversation = toAnthropicConversation(req.messages);

  const body: AnthropicRequest = {
    model: req.model,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages: conversation.messages,
  };
  if (conversation.system.length > 0) body.system = conversation.system;
  if (tools !== undefined) body.tools = tools;
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  if (stop !== undefined) body.stop_sequences = stop;
  if (sampling.temperature !== undefined) body.temperature = sampling.temperature;
  if (sampling.top_p !== undefined) body.top_p = sampling.top_p;
  if (format !== undefined) body.output_config = { format };
  if (userId !== undefined) body.metadata = { user_id: userId };
  if (req.stream === true) body.stream = true;
  return body;
}

function checkSupported(req: ChatRequest): void {
  if (req.temperature !== undefined && req.temperature > MAX_TEMPERATURE) {
    throw new InvalidRequestError(
      `Invalid value for 'temperature': ${req.temperature}. The provider behind this model alias accepts a temperature from 0 to ${MAX_TEMPERATURE}.`,
      'temperature',
      'invalid_value',
    );
  }
  if (req.response_format?.type === 'json_object') {
    throw new InvalidRequestError(
      "Invalid value for 'response_format.type': 'json_object' is not supported by the provider behind this model alias. " +
        'Ask for JSON in the prompt, or use a model alias served by an OpenAI-compatible provider.',
      'response_format.type',
      'invalid_value',
    );
  }
}

function samplingOf(req: ChatRequest): { temperature?: number; top_p?: number } {
  const { temperature, top_p } = req;
  if (temperature === undefined || top_p === undefined) {
    return { ...(temperature === undefined ? {} : { temperature }), ...(top_p === undefined ? {} : { top_p }) };
  }
  if (top_p === NO_NUCLEUS_CUT) return { temperature };
  if (temperature === DEFAULT_TEMPERATURE) return { top_p };
  throw new InvalidRequestError(
    `Invalid value for 'top_p': ${top_p} together with temperature ${temperature}. The provider behind this model alias refuses temperature and top_p in one request; set only one of them.`,
    'top_p',
    'invalid_value',
  );
}

function stopSequencesOf(req: ChatRequest): string[] | undefined {
  if (req.stop === undefined) return undefined;
  const list = typeof req.stop === 'string' ? [req.stop] : [...req.stop];
  for (let k = 0; k < list.length; k++) {
    if (!isBlank(list[k] as string)) continue;
    const param = typeof req.stop === 'string' ? 'stop' : `stop[${k}]`;
    throw new InvalidRequestError(
      `Invalid value for '${param}': the stop sequence is empty or only whitespace. The provider behind this model alias refuses such stop sequences, and leaving it out would let the answer run past it. Remove it, or use a sequence with a visible character.`,
      param,
      'invalid_value',
    );
  }
  return list;
}

function toAnthropicTool(tool: ToolDefinition, index: number): AnthropicTool {
  const out: AnthropicTool = { name: tool.function.name, input_schema: inputSchemaOf(tool.function.parameters, index) };
  if (tool.function.description !== undefined) out.description = tool.function.description;
  return out;
}

/** Anthropic requires an input_schema of type "object"; OpenAI allows a
 * function without parameters, or a schema that leaves the type implicit. */
function inputSchemaOf(parameters: Record<string, unknown> | undefined, index: number): Record<string, unknown> {
  if (parameters === undefined) return { type: 'object', properties: {} };
  const type = parameters['type'];
  if (type === undefined) return { type: 'object', ...parameters };
  if (type !== 'object') {
    const param = `tools[${index}].function.parameters.type`;
    throw new InvalidRequestError(
      `Invalid value for '${param}': the provider behind this model alias needs a tool's parameters to be a schema of type "object".`,
      param,
      'invalid_value',
    );
  }
  return parameters;
}

/**
 * The client's tool_choice, with parallel_tool_calls false as
 * disable_parallel_tool_use (on auto when the client set no choice). Without
 * tools, or with "none", no tool can be called, so there is nothing to limit
 * (and Anthropic's "none" takes no such field). true is Anthropic's default.
 */
function toolChoiceOf(req: ChatRequest, hasTools: boolean): AnthropicToolChoice | undefined {
  const choice = req.tool_choice === undefined ? undefined : toAnthropicToolChoice(req.tool_choice);
  if (req.parallel_tool_calls !== false || !hasTools || choice?.type === 'none') return choice;
  return { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
}

function toAnthropicToolChoice(choice: ToolChoice): AnthropicToolChoice {
  switch (choice) {
    case 'none':
      return { type: 'none' };
    case 'auto':
      return { type: 'auto' };
    case 'required':
      return { type: 'any' };
    default:
      return { type: 'tool', name: choice.function.name };
  }
}
