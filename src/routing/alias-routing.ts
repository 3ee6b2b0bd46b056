// What a request's `model` means: a named alias, or for service-auto the
// alias the rules choose. Pure over the config; whether an alias can be
// reached at all (circuit breakers) is asked through `isAvailable`.
import { AUTO_ALIAS, type AliasConfig, type AutoCondition, type GatewayConfig } from '../config/config.ts';
import type { ChatRequest } from '../chat/types.ts';
import { ModelNotFoundError } from '../errors/api-error.ts';
import { estimatePromptTokens } from './token-estimate.ts';

export interface ResolvedAlias {
  /** The alias the response names as `model`; never service-auto. */
  alias: string;
  config: AliasConfig;
  /** `requested`, or for service-auto the rule's reason (`image_url`, `tools`, `default`, ...). */
  reason: string;
  /** service-auto candidates passed over, and why (`service-vision:circuit_open`). */
  skipped: string[];
}

interface RequestFeatures {
  images: boolean;
  tools: boolean;
  jsonObject: boolean;
  stream: boolean;
  promptTokens: number;
}

export function requestFeatures(request: ChatRequest): RequestFeatures {
  let images = false;
  for (const message of request.messages) {
    if (Array.isArray(message.content) && message.content.some((part) => part.type === 'image_url')) {
      images = true;
      break;
    }
  }
  return {
    images,
    tools: request.tools !== undefined && request.tools.length > 0,
    jsonObject: request.response_format?.type === 'json_object',
    stream: request.stream === true,
    promptTokens: estimatePromptTokens(request),
  };
}

function conditionHolds(when: AutoCondition, f: RequestFeatures): boolean {
  if (when.images !== undefined && when.images !== f.images) return false;
  if (when.tools !== undefined && when.tools !== f.tools) return false;
  if (when.jsonObject !== undefined && when.jsonObject !== f.jsonObject) return false;
  if (when.stream !== undefined && when.stream !== f.stream) return false;
  if (when.minPromptTokens !== undefined && f.promptTokens < when.minPromptTokens) return false;
  return true;
}

/** The estimated prompt must leave room in the window; an alias with no window always fits. */
function fitsContextWindow(alias: AliasConfig, promptTokens: number): boolean {
  return alias.contextWindow === null || promptTokens < alias.contextWindow;
}

/**
 * Spec rule 1: the response `model` holds the resolved alias. For
 * service-auto: the first matching rule whose alias fits the prompt and has a
 * reachable target; then the default alias; then any alias whose context
 * window fits (reason `context_window`). When nothing qualifies the default is
 * used anyway, so the client gets the upstream's own answer (503 when all its
 * breakers are open). An unknown alias is model_not_found, naming `usable()`'s
 * model names when given.
 */
export function resolveAlias(
  request: ChatRequest,
  config: Pick<GatewayConfig, 'aliases' | 'auto'>,
  isAvailable: (alias: string) => boolean = () => true,
  usable?: () => readonly string[],
): ResolvedAlias {
  if (request.model !== AUTO_ALIAS) {
    if (!Object.hasOwn(config.aliases, request.model)) throw new ModelNotFoundError(request.model, usable?.());
    return { alias: request.model, config: config.aliases[request.model] as AliasConfig, reason: 'requested', skipped: [] };
  }
  const features = requestFeatures(request);
  const skipped: string[] = [];
  const tryAlias = (alias: string, reason: string): ResolvedAlias | undefined => {
    const target = config.aliases[alias];
    if (target === undefined) return undefined;
    if (!fitsContextWindow(target, features.promptTokens)) {
      skipped.push(`${alias}:context_window`);
      return undefined;
    }
    if (!isAvailable(alias)) {
      skipped.push(`${alias}:circuit_open`);
      return undefined;
    }
    return { alias, config: target, reason, skipped };
  };
  for (const rule of config.auto.rules) {
    if (!conditionHolds(rule.when, features)) continue;
    const chosen = tryAlias(rule.use, rule.reason);
    if (chosen !== undefined) return chosen;
  }
  const byDefault = tryAlias(config.auto.default, 'default');
  if (byDefault !== undefined) return byDefault;
  for (const alias of Object.keys(config.aliases)) {
    if (alias === config.auto.default || skipped.some((s) => s.startsWith(`${alias}:`))) continue;
    const chosen = tryAlias(alias, 'context_window');
    if (chosen !== undefined) return chosen;
  }
  const fallback = config.auto.default;
  return { alias: fallback, config: config.aliases[fallback] as AliasConfig, reason: 'default', skipped };
}

/** Aliases in listing order: the configured ones, then service-auto. */
export function listAliases(config: Pick<GatewayConfig, 'aliases'>): string[] {
  return [...Object.keys(config.aliases), AUTO_ALIAS];
}
