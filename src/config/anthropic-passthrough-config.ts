// What a Messages client may hand an Anthropic provider beyond the documented
// request: top-level fields passed through unchecked (`messagesPassthrough`)
// and the anthropic-beta values it may send (`anthropicBetas`). Both are the
// operator's to widen; the checks catch the mistakes that would silently
// allow nothing (a typo of a documented field, a misspelt beta) or everything
// by accident (a wildcard beside names).
import type { GatewayConfig } from './config.ts';
import { join, type Checker, type Obj } from './config-checker.ts';
import { editDistance } from './config-issues.ts';
import { parsePassthroughFields, refuseSettings } from './passthrough-fields.ts';
import { DEFAULT_ANTHROPIC_BETAS } from './provider-defaults.ts';

/** The settings only an anthropic provider has. */
export const ANTHROPIC_ONLY_SETTINGS: readonly string[] = ['messagesPassthrough', 'anthropicBetas'];

/**
 * The top-level fields of a Messages request the gateway's validator checks
 * itself (src/messages/message-request-validator.ts DOCUMENTED_TOP_LEVEL_FIELDS,
 * equal by test): naming one as a passthrough would either do nothing or skip
 * its checks. Anthropic's fields that change price or routing at Anthropic
 * (fallbacks, fallback_credit_token, billing_policy, speed, inference_geo) are
 * not among them: an operator allows them by naming them.
 */
export const DOCUMENTED_MESSAGES_FIELDS: readonly string[] = [
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  'output_config',
  'cache_control',
  'context_management',
  'compaction',
  'output_format',
  'container',
  'mcp_servers',
  'diagnostics',
  'thread',
];

/** The wildcard of anthropicBetas: every value passes. */
export const ANY_BETA = '*';

const MAX_BETAS = 64;
/** A beta value: lower-case words joined by hyphens (or dots), as Anthropic names them; never a comma or space, which separate values in the header. */
const BETA_VALUE = /^[a-z0-9]+(?:[-.][a-z0-9]+)*$/;
const MAX_BETA_LENGTH = 100;
/** A beta's trailing release date, `-YYYY-MM-DD` or `-YYYYMMDD`. */
const BETA_DATE = /-(\d{4}-\d{2}-\d{2}|\d{8})$/;

export function parseMessagesPassthrough(c: Checker, o: Obj, at: string): string[] {
  return parsePassthroughFields(c, o, at, { setting: 'messagesPassthrough', api: 'Messages', documented: DOCUMENTED_MESSAGES_FIELDS, example: '["speed"]' });
}

export function parseAnthropicBetas(c: Checker, o: Obj, at: string): string[] {
  const value = o['anthropicBetas'];
  if (value === undefined) return [...DEFAULT_ANTHROPIC_BETAS];
  const vat = join(at, 'anthropicBetas');
  if (!Array.isArray(value) || value.length > MAX_BETAS) {
    return c.report(vat, { code: 'not_array', message: `must be an array of at most ${MAX_BETAS} anthropic-beta values, e.g. ["interleaved-thinking-2025-05-14"], or ["*"]` }) ?? [...DEFAULT_ANTHROPIC_BETAS];
  }
  const betas: string[] = [];
  value.forEach((beta: unknown, i) => {
    const iat = `${vat}[${i}]`;
    if (beta === ANY_BETA) {
      if (value.length > 1) c.report(iat, { code: 'conflict', message: '"*" passes every value: list it alone, or list the values without it' });
      else betas.push(beta);
      return;
    }
    if (typeof beta !== 'string' || beta.length > MAX_BETA_LENGTH || !BETA_VALUE.test(beta)) {
      c.report(iat, {
        code: 'invalid_value',
        message: `must be one anthropic-beta value such as "interleaved-thinking-2025-05-14": lower-case letters and digits joined by hyphens, at most ${MAX_BETA_LENGTH} characters, no commas or spaces (one value per entry)`,
      });
      return;
    }
    const near = nearMiss(beta);
    if (near !== null) {
      c.report(iat, { code: 'invalid_value', message: `"${beta}" is not a beta Anthropic names; did you mean "${near}"?` });
      return;
    }
    if (betas.includes(beta)) {
      c.report(iat, { code: 'conflict', message: `"${beta}" is listed twice` });
      return;
    }
    betas.push(beta);
  });
  return betas;
}

/** A known beta with the same release date whose feature name is a small edit away: a typo (another date is another version). */
function nearMiss(beta: string): string | null {
  if (DEFAULT_ANTHROPIC_BETAS.includes(beta)) return null;
  const date = BETA_DATE.exec(beta)?.[1];
  if (date === undefined) return null;
  const feature = beta.slice(0, -date.length - 1);
  for (const known of DEFAULT_ANTHROPIC_BETAS) {
    if (!known.endsWith(`-${date}`)) continue;
    const knownFeature = known.slice(0, -date.length - 1);
    if (editDistance(feature, knownFeature) <= 2) return known;
  }
  return null;
}

/** For a provider type without these settings: one issue per setting present,
 * saying where they apply; returns `o` without them (the same object when it has none). */
export function refuseAnthropicOnlySettings(c: Checker, o: Obj, at: string, type: string): Obj {
  return refuseSettings(
    c,
    o,
    at,
    ANTHROPIC_ONLY_SETTINGS,
    `applies to "type": "anthropic" providers only (an "${type}" provider receives the gateway's translation of a Messages request, never the client's body or headers): remove it`,
  );
}

/** Every anthropic provider's messagesPassthrough names, once each, in config order: the Messages validator accepts these at the top level. */
export function messagesPassthroughFields(config: Pick<GatewayConfig, 'providers'>): ReadonlySet<string> {
  const names = new Set<string>();
  for (const provider of Object.values(config.providers)) {
    if (provider.type === 'anthropic') for (const name of provider.messagesPassthrough) names.add(name);
  }
  return names;
}
