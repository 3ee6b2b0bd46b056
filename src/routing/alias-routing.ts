// Alias resolution: what a request's `model` means. Pure over the config.
import { AUTO_ALIAS, type AliasConfig, type GatewayConfig } from '../config/config.ts';
import type { ChatRequest } from '../chat/types.ts';
import { ModelNotFoundError } from '../errors.ts';

export interface ResolvedAlias {
  /** The alias the response names as `model`; never service-auto. */
  alias: string;
  target: AliasConfig;
  /** Why this alias: `requested` or, for service-auto, the rule that chose it. */
  reason: string;
}

/**
 * Spec rule 1: the response `model` holds the resolved alias. service-auto
 * resolves to the configured default (routing rules arrive with issue 3).
 */
export function resolveAlias(request: Pick<ChatRequest, 'model'>, config: Pick<GatewayConfig, 'aliases' | 'auto'>): ResolvedAlias {
  if (request.model === AUTO_ALIAS) {
    const alias = config.auto.default;
    const target = config.aliases[alias];
    if (target === undefined) throw new Error(`auto.default names unknown alias ${alias}`);
    return { alias, target, reason: 'default' };
  }
  if (!Object.hasOwn(config.aliases, request.model)) throw new ModelNotFoundError(request.model);
  return { alias: request.model, target: config.aliases[request.model] as AliasConfig, reason: 'requested' };
}

/** Aliases in listing order: the configured ones, then service-auto. */
export function listAliases(config: Pick<GatewayConfig, 'aliases'>): string[] {
  return [...Object.keys(config.aliases), AUTO_ALIAS];
}
