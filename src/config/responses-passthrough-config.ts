// What an "openai" provider does with a Responses client's request: the
// mode (`responses`: the client's own body to the upstream's /responses, or
// the gateway's chat translation) and, in passthrough mode, the top-level
// fields beyond the documented request that a client may carry through
// (`responsesPassthrough`). Azure OpenAI is the same type: its v1 API
// (`.../openai/v1`) serves /responses, a deployments URL does not.
import type { GatewayConfig } from './config.ts';
import { join, type Checker, type Obj } from './config-checker.ts';
import { parsePassthroughFields, refuseSettings } from './passthrough-fields.ts';
import { DEFAULT_RESPONSES_MODE, ResponsesMode } from './provider-defaults.ts';

/** The settings only an openai provider has. */
export const OPENAI_ONLY_SETTINGS: readonly string[] = ['responses', 'responsesPassthrough', 'responsesHostedTools'];

/**
 * The top-level fields of OpenAI's documented Responses request
 * (https://platform.openai.com/docs/api-reference/responses/create), which
 * the gateway's validator checks itself: naming one as a passthrough would
 * either do nothing or skip its checks. Not in it: `service_tier` and
 * `access_programs`, which change what the upstream bills and pass only where
 * the operator names them. The validator's own list is held equal to this one
 * by a test.
 */
export const DOCUMENTED_RESPONSES_FIELDS: readonly string[] = [
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_output_tokens',
  'max_tool_calls',
  'temperature',
  'top_p',
  'top_logprobs',
  'text',
  'reasoning',
  'include',
  'store',
  'previous_response_id',
  'conversation',
  'metadata',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt',
  'prompt_cache_options',
  'client_metadata',
  'context_management',
  'moderation',
  'image',
  'truncation',
  'background',
  'stream',
  'stream_options',
];

const MODES: readonly ResponsesMode[] = [ResponsesMode.Passthrough, ResponsesMode.Translate];

export function parseResponsesMode(c: Checker, o: Obj, at: string): ResponsesMode {
  return c.optional(o, 'responses', at, DEFAULT_RESPONSES_MODE, (v, vat) => c.oneOf(v, vat, MODES));
}

/** The list, checked; in translate mode it is a conflict (the upstream never receives the client's body). */
export function parseResponsesPassthrough(c: Checker, o: Obj, at: string, mode: ResponsesMode): string[] {
  const names = parsePassthroughFields(c, o, at, { setting: 'responsesPassthrough', api: 'Responses', documented: DOCUMENTED_RESPONSES_FIELDS, example: '["new_field"]' });
  if (o['responsesPassthrough'] === undefined || mode === ResponsesMode.Passthrough) return names;
  c.report(join(at, 'responsesPassthrough'), {
    code: 'conflict',
    message: `applies only with "responses": "passthrough" (in "${mode}" mode the upstream receives the gateway's chat translation of a Responses request, never the client's body): set "responses": "passthrough" or remove it`,
  });
  return [];
}

/** For a provider type without these settings: one issue per setting present,
 * saying where they apply; returns `o` without them. */
export function refuseOpenAIOnlySettings(c: Checker, o: Obj, at: string, type: string): Obj {
  return refuseSettings(
    c,
    o,
    at,
    OPENAI_ONLY_SETTINGS,
    `applies to "type": "openai" providers only (an "${type}" provider receives the gateway's chat translation of a Responses request, never the client's body): remove it`,
  );
}

/** Every openai provider's responsesPassthrough names (passthrough mode only), once each, in config order: the Responses validator accepts these at the top level. */
export function responsesPassthroughFields(config: Pick<GatewayConfig, 'providers'>): ReadonlySet<string> {
  const names = new Set<string>();
  for (const provider of Object.values(config.providers)) {
    if (provider.type === 'openai' && provider.responses === ResponsesMode.Passthrough) for (const name of provider.responsesPassthrough) names.add(name);
  }
  return names;
}

/**
 * The Responses tools the upstream runs itself, in its own account: they are
 * billed there per call or per container (outside a key's usage) and can reach
 * what that account holds (vector stores, containers, MCP servers). The
 * validator's list of hosted tools holds these and the client-run ones
 * (computer, shell, apply_patch...), which a passthrough provider sends as any
 * function; a test holds this list within the validator's.
 */
export const UPSTREAM_RUN_TOOLS: readonly string[] = [
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'file_search',
  'code_interpreter',
  'image_generation',
  'mcp',
  'tool_search',
  'programmatic_tool_calling',
];

/** Codex offers web_search on every request: a passthrough provider lets it through unless told otherwise. */
export const DEFAULT_RESPONSES_HOSTED_TOOLS: readonly string[] = ['web_search'];

/** responsesHostedTools: the upstream-run tools a client may have this provider's upstream run (passthrough mode only). */
export function parseResponsesHostedTools(c: Checker, o: Obj, at: string, mode: ResponsesMode): string[] {
  const value = o['responsesHostedTools'];
  const where = join(at, 'responsesHostedTools');
  if (value === undefined) return mode === ResponsesMode.Passthrough ? [...DEFAULT_RESPONSES_HOSTED_TOOLS] : [];
  if (mode !== ResponsesMode.Passthrough) {
    c.report(where, { code: 'conflict', message: `applies only with "responses": "passthrough" (in "${mode}" mode the translation leaves every hosted tool out of the offer): set "responses": "passthrough" or remove it` });
    return [];
  }
  if (!Array.isArray(value)) {
    c.report(where, { code: 'not_array', message: `must be an array of tool types, e.g. ["web_search", "file_search"]` });
    return [...DEFAULT_RESPONSES_HOSTED_TOOLS];
  }
  const names: string[] = [];
  value.forEach((name: unknown, i: number) => {
    const item = `${where}[${i}]`;
    if (typeof name !== 'string' || !UPSTREAM_RUN_TOOLS.includes(name)) {
      c.report(item, { code: 'invalid_value', message: `must be one of the tools an upstream runs: ${UPSTREAM_RUN_TOOLS.map((t) => `"${t}"`).join(', ')}` });
    } else if (names.includes(name)) {
      c.report(item, { code: 'conflict', message: `"${name}" is listed twice` });
    } else names.push(name);
  });
  return names;
}
