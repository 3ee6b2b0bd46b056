// What a fake Anthropic upstream holds a request passed through from a
// Messages client to: Anthropic's documented constraints as today's clients
// meet them. The older core (messages, content blocks, tools, tool pairing,
// sampling, stop sequences, metadata, structured outputs) is
// ../providers/anthropic-constraints.ts; this adds what Claude Code and the
// SDKs send beyond it, each checked and then set aside before the core runs:
// - `thinking` (https://platform.claude.com/docs/en/build-with-claude/extended-thinking):
//   enabled with budget_tokens >= 1024 and below max_tokens, adaptive (display
//   summarized or omitted), or disabled; with thinking on, temperature only 1,
//   no top_k, top_p from 0.95 to 1, no forced tool use; thinking blocks in the
//   history keep the signature they were answered with ("Invalid `signature`
//   in `thinking` block"), redacted_thinking keeps its data;
// - `context_management` (context editing, beta header
//   context-management-2025-06-27), `output_config.effort` (low, medium, high,
//   max), `service_tier` (auto, standard_only), and the top-level fields of
//   the pinned SDK's MessageCreateParams (`cache_control`, `speed`,
//   `container`, `diagnostics`, `inference_geo`, `user_profile_id`,
//   `workspace_id`), checked for their type;
// - tools with `defer_loading` (tool search, beta header
//   advanced-tool-use-2025-11-20), `eager_input_streaming`, `strict`;
// - `"role": "system"` messages after the first turn (string or text blocks),
//   which may carry their own `output_config.effort` (with the beta header
//   per-turn-control-2026-07-01, as Claude Code sends them);
// - the `anthropic-beta` header: an unknown value is refused with Anthropic's
//   wording ("Unexpected value(s) ... for the `anthropic-beta` header").
// count_tokens takes the same body without max_tokens, stream, metadata,
// stop_sequences or sampling ("Extra inputs are not permitted").
import type { IncomingHttpHeaders } from 'node:http';
import { anthropicRequestViolation } from '../providers/anthropic-constraints.ts';
import { checkKeys, fail, isObject, Violation, type Json } from '../providers/anthropic-output-constraints.ts';

/** Beta values Anthropic documents (and the pinned clients send); a fake may accept fewer. */
export const DOCUMENTED_BETAS: readonly string[] = [
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'context-management-2025-06-27',
  'per-turn-control-2026-07-01',
  'mid-conversation-tool-changes-2026-07-01',
  'thinking-token-count-2026-05-13',
  'advanced-tool-use-2025-11-20',
  'effort-2025-11-24',
  'structured-outputs-2025-11-13',
  'prompt-caching-2024-07-31',
  'token-efficient-tools-2025-02-19',
  'fine-grained-tool-streaming-2025-05-14',
  'output-128k-2025-02-19',
  'context-1m-2025-08-07',
  'files-api-2025-04-14',
  'model-context-window-exceeded-2025-08-26',
];

const THINKING_MIN_BUDGET = 1024;
const EFFORTS = ['low', 'medium', 'high', 'max'];
/** Fields of POST /v1/messages the core checker does not know. */
const NEWER_FIELDS = ['thinking', 'context_management', 'service_tier', 'cache_control', 'container', 'diagnostics', 'inference_geo', 'speed', 'user_profile_id', 'workspace_id'];
/** Top-level string fields of today's API (the SDK's MessageCreateParams), checked for type only. */
const STRING_FIELDS = ['inference_geo', 'user_profile_id', 'workspace_id'];
const COUNT_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'context_management', 'output_config']);

export interface MessagesCheckOptions {
  /** The request's headers: `anthropic-beta` is checked against `betas`, and the fields that need a beta against what was sent. */
  headers?: IncomingHttpHeaders;
  /** Accepted beta values; default DOCUMENTED_BETAS. */
  betas?: readonly string[];
  /** Whether a thinking block's signature is one this upstream gave for that text. Default: any non-empty signature. */
  signatureValid?: (thinking: string, signature: string) => boolean;
  /** POST /v1/messages/count_tokens rather than /v1/messages. */
  countTokens?: boolean;
}

function sentBetas(headers: IncomingHttpHeaders | undefined): string[] {
  const raw = headers?.['anthropic-beta'];
  if (raw === undefined) return [];
  return (Array.isArray(raw) ? raw.join(',') : raw)
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

function checkThinkingConfig(body: Json): boolean {
  const thinking = body['thinking'];
  if (thinking === undefined) return false;
  if (!isObject(thinking)) fail('thinking: Input should be a valid dictionary');
  switch (thinking['type']) {
    case 'disabled':
      checkKeys(thinking, ['type'], 'thinking.disabled');
      return false;
    case 'enabled': {
      checkKeys(thinking, ['type', 'budget_tokens', 'display'], 'thinking.enabled');
      const budget = thinking['budget_tokens'];
      if (typeof budget !== 'number' || !Number.isInteger(budget)) fail('thinking.enabled.budget_tokens: Field required');
      if (budget < THINKING_MIN_BUDGET) fail(`thinking.enabled.budget_tokens: Input should be greater than or equal to ${THINKING_MIN_BUDGET}`);
      if (typeof body['max_tokens'] === 'number' && body['max_tokens'] <= budget) fail('`max_tokens` must be greater than `thinking.budget_tokens`.');
      break;
    }
    case 'adaptive':
      checkKeys(thinking, ['type', 'display'], 'thinking.adaptive');
      break;
    default:
      fail("thinking.type: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'");
  }
  const display = thinking['display'];
  if (display !== undefined && display !== 'summarized' && display !== 'omitted') fail(`thinking.${String(thinking['type'])}.display: Input should be 'summarized' or 'omitted'`);
  if (body['temperature'] !== undefined && body['temperature'] !== 1) fail('`temperature` may only be set to 1 when thinking is enabled.');
  if (body['top_k'] !== undefined) fail('`top_k` must be unset when thinking is enabled.');
  const topP = body['top_p'];
  if (topP !== undefined && !(typeof topP === 'number' && topP >= 0.95 && topP <= 1)) fail('`top_p` must be greater than or equal to 0.95 and less than or equal to 1 when thinking is enabled.');
  const choice = body['tool_choice'];
  if (isObject(choice) && (choice['type'] === 'any' || choice['type'] === 'tool')) fail('Thinking may not be enabled when tool_choice forces tool use.');
  return true;
}

function checkContextManagement(value: unknown, betas: string[]): void {
  if (value === undefined) return;
  if (!betas.includes('context-management-2025-06-27')) fail('context_management: Extra inputs are not permitted');
  if (!isObject(value)) fail('context_management: Input should be a valid dictionary');
  checkKeys(value, ['edits'], 'context_management');
  const edits = value['edits'];
  if (!Array.isArray(edits)) fail('context_management.edits: Input should be a valid list');
  for (const [k, edit] of edits.entries()) {
    if (!isObject(edit) || typeof edit['type'] !== 'string' || !/^clear_(thinking|tool_uses)_\d{8}$/.test(edit['type'])) {
      fail(`context_management.edits.${k}.type: Input tag does not match any of the expected tags: 'clear_tool_uses_20250919', 'clear_thinking_20251015'`);
    }
  }
}

/** Checks and removes what the core checker does not know from one message; returns the message for the core, or undefined for a system message. */
function ownBlocks(message: unknown, index: number, options: MessagesCheckOptions & { sentBetaValues: string[] }): unknown {
  if (!isObject(message)) return message;
  const where = `messages.${index}`;
  if (message['role'] === 'system') {
    if (index === 0) fail(`${where}.role: a system message cannot open the conversation: use the top-level system parameter`);
    checkKeys(message, ['role', 'content', 'output_config'], where);
    const turnOutput = message['output_config'];
    if (turnOutput !== undefined) {
      if (!options.sentBetaValues.includes('per-turn-control-2026-07-01')) fail(`${where}.output_config: Extra inputs are not permitted`);
      if (!isObject(turnOutput)) fail(`${where}.output_config: Input should be a valid dictionary`);
      checkKeys(turnOutput, ['effort'], `${where}.output_config`);
      if (!EFFORTS.includes(turnOutput['effort'] as string)) fail(`${where}.output_config.effort: Input should be ${EFFORTS.map((e) => `'${e}'`).join(', ')}`);
    }
    const content = message['content'];
    if (typeof content === 'string') {
      if (content.trim() === '') fail('messages: text content blocks must contain non-whitespace text');
    } else if (Array.isArray(content) && content.length > 0) {
      for (const [k, block] of content.entries()) {
        if (!isObject(block) || block['type'] !== 'text') fail(`${where}.content.${k}.type: Input should be 'text'`);
        checkKeys(block, ['type', 'text', 'cache_control'], `${where}.content.${k}`);
        if (typeof block['text'] !== 'string' || block['text'].trim() === '') fail('messages: text content blocks must contain non-whitespace text');
      }
    } else {
      fail(`${where}.content: Input should be a valid string or a non-empty list`);
    }
    return undefined;
  }
  const content = message['content'];
  if (!Array.isArray(content)) return message;
  const kept: unknown[] = [];
  for (const [k, block] of content.entries()) {
    const at = `${where}.content.${k}`;
    if (isObject(block) && (block['type'] === 'thinking' || block['type'] === 'redacted_thinking')) {
      if (message['role'] !== 'assistant') fail(`${at}: thinking blocks are only allowed in assistant messages`);
      if (block['type'] === 'thinking') {
        checkKeys(block, ['type', 'thinking', 'signature'], at);
        const thinking = block['thinking'];
        const signature = block['signature'];
        if (typeof thinking !== 'string') fail(`${at}.thinking.thinking: Field required`);
        if (typeof signature !== 'string' || signature === '') fail(`${at}.thinking.signature: Field required`);
        if (options.signatureValid !== undefined && !options.signatureValid(thinking, signature)) fail(`${at}: Invalid \`signature\` in \`thinking\` block`);
      } else {
        checkKeys(block, ['type', 'data'], at);
        if (typeof block['data'] !== 'string' || block['data'] === '') fail(`${at}.redacted_thinking.data: Field required`);
      }
      continue;
    }
    kept.push(block);
  }
  // An assistant turn of thinking alone is what a signature-keeping client may send before a tool call; the core wants it non-empty.
  return { ...message, content: kept.length === 0 && message['role'] === 'assistant' ? [{ type: 'text', text: '(thinking)' }] : kept };
}

function ownToolFields(tools: unknown, betas: string[]): unknown {
  if (!Array.isArray(tools)) return tools;
  return tools.map((tool, k) => {
    if (!isObject(tool)) return tool;
    const rest: Json = { ...tool };
    for (const key of ['defer_loading', 'eager_input_streaming', 'strict'] as const) {
      if (rest[key] === undefined) continue;
      if (typeof rest[key] !== 'boolean') fail(`tools.${k}.custom.${key}: Input should be a valid boolean`);
      if (key === 'defer_loading' && !betas.includes('advanced-tool-use-2025-11-20')) fail(`tools.${k}.custom.defer_loading: Extra inputs are not permitted`);
      delete rest[key];
    }
    return rest;
  });
}

/** The first constraint the request breaks, in Anthropic's words where they are public; undefined when it keeps them all. */
export function messagesRequestViolation(body: unknown, options: MessagesCheckOptions = {}): string | undefined {
  try {
    const betas = sentBetas(options.headers);
    const accepted = options.betas ?? DOCUMENTED_BETAS;
    const unknown = betas.filter((beta) => !accepted.includes(beta));
    if (unknown.length > 0) fail(`Unexpected value(s) \`${unknown.join('`, `')}\` for the \`anthropic-beta\` header. Please consult our documentation at docs.claude.com or try again without the header.`);
    if (!isObject(body)) fail('body: Input should be a valid dictionary');
    if (options.countTokens === true) {
      for (const key of Object.keys(body)) if (!COUNT_FIELDS.has(key)) fail(`${key}: Extra inputs are not permitted`);
    }
    checkThinkingConfig(body);
    checkContextManagement(body['context_management'], betas);
    const serviceTier = body['service_tier'];
    if (serviceTier !== undefined && serviceTier !== 'auto' && serviceTier !== 'standard_only') fail("service_tier: Input should be 'auto' or 'standard_only'");
    for (const key of STRING_FIELDS) if (body[key] !== undefined && body[key] !== null && typeof body[key] !== 'string') fail(`${key}: Input should be a valid string`);
    const speed = body['speed'];
    if (speed !== undefined && speed !== null && speed !== 'standard' && speed !== 'fast') fail("speed: Input should be 'standard' or 'fast'");
    const cacheControl = body['cache_control'];
    if (cacheControl !== undefined && cacheControl !== null && !(isObject(cacheControl) && cacheControl['type'] === 'ephemeral')) fail("cache_control.type: Input should be 'ephemeral'");
    const output = body['output_config'];
    if (isObject(output) && output['effort'] !== undefined && !EFFORTS.includes(output['effort'] as string)) fail(`output_config.effort: Input should be ${EFFORTS.map((e) => `'${e}'`).join(', ')}`);
    const core: Json = { ...body };
    for (const key of NEWER_FIELDS) delete core[key];
    if (isObject(output) && output['effort'] !== undefined) {
      const { effort: _effort, ...rest } = output;
      if (Object.keys(rest).length === 0) delete core['output_config'];
      else core['output_config'] = rest;
    }
    if (Array.isArray(body['messages'])) core['messages'] = body['messages'].map((message, index) => ownBlocks(message, index, { ...options, sentBetaValues: betas })).filter((message) => message !== undefined);
    core['tools'] = ownToolFields(body['tools'], betas);
    if (core['tools'] === undefined) delete core['tools'];
    // count_tokens has no max_tokens; the core wants one.
    if (options.countTokens === true) core['max_tokens'] = 1;
    return anthropicRequestViolation(core);
  } catch (error) {
    if (error instanceof Violation) return error.message;
    throw error;
  }
}
