// What a request's `model` means: a named alias, or for service-auto the
// alias the rules choose. Pure over the config; whether an alias can be
// reached at all (circuit breakers) is asked through `isAvailable`. The prompt
// size service-auto compares is the reservation's prompt bound
// (src/chat/request-prompt-bound.ts), an upper bound, at each alias's
// imageTokens: an alias is chosen only when the prompt it will be reserved
// with fits its context window. service-auto chooses only among aliases that
// take every optional request field the request carries (their requestFields,
// src/chat/request-fields.ts): the validator let through what some alias takes.
// An alias serves one kind of request: a chat-shaped request (chat
// completions, Messages, Responses, count_tokens) naming an embeddings alias,
// or an embeddings request naming a chat alias, is model_kind_mismatch, and
// service-auto never chooses an embeddings alias.
import { AUTO_ALIAS, type AliasConfig, type AliasKind, type AutoCondition, type GatewayConfig } from '../config/config.ts';
import { aliasRequestFields } from '../config/request-fields-config.ts';
import { promptBoundOf, promptTokensFor } from '../chat/request-prompt-bound.ts';
import { requestFieldsUsed, type RequestFieldName } from '../chat/request-fields.ts';
import { createIssue, issueToError, type FieldRefusal } from '../chat/request-issues.ts';
import type { PromptBound, ValidatedChatRequest } from '../chat/types.ts';
import { ApiError, ModelNotFoundError } from '../errors/api-error.ts';

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
  /** The prompt bound; its tokens for an alias are promptTokensFor(prompt, alias.imageTokens). */
  prompt: PromptBound;
}

export function requestFeatures(request: ValidatedChatRequest): RequestFeatures {
  const prompt = promptBoundOf(request);
  return {
    images: prompt.imageParts > 0,
    tools: request.tools !== undefined && request.tools.length > 0,
    jsonObject: request.response_format?.type === 'json_object',
    stream: request.stream === true,
    prompt,
  };
}

/** `alias`: the rule's; minPromptTokens compares the prompt bound at its imageTokens. */
function conditionHolds(when: AutoCondition, f: RequestFeatures, alias: AliasConfig): boolean {
  if (when.images !== undefined && when.images !== f.images) return false;
  if (when.tools !== undefined && when.tools !== f.tools) return false;
  if (when.jsonObject !== undefined && when.jsonObject !== f.jsonObject) return false;
  if (when.stream !== undefined && when.stream !== f.stream) return false;
  if (when.minPromptTokens !== undefined && promptTokensFor(f.prompt, alias.imageTokens) < when.minPromptTokens) return false;
  return true;
}

/** The prompt bound must leave room in the window; an alias with no window always fits. */
function fitsContextWindow(alias: AliasConfig, prompt: PromptBound): boolean {
  return alias.contextWindow === null || promptTokensFor(prompt, alias.imageTokens) < alias.contextWindow;
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
  request: ValidatedChatRequest,
  config: Pick<GatewayConfig, 'aliases' | 'auto'> & { readonly requestFields?: readonly RequestFieldName[] },
  isAvailable: (alias: string) => boolean = () => true,
  usable?: () => readonly string[],
): ResolvedAlias {
  if (request.model !== AUTO_ALIAS) {
    // Own names only: 'constructor' or '__proto__' is no alias.
    const named = Object.hasOwn(config.aliases, request.model) ? config.aliases[request.model] : undefined;
    if (named === undefined) throw new ModelNotFoundError(request.model, usable?.());
    if (named.kind === 'embeddings') throw kindMismatch(request.model, 'embeddings', config, usable);
    return { alias: request.model, config: named, reason: 'requested', skipped: [] };
  }
  const features = requestFeatures(request);
  const fields = requestFieldsUsed(request);
  const global = config.requestFields ?? [];
  const takesFields = (alias: AliasConfig): boolean => fields.length === 0 || refusedField(alias, global, fields) === undefined;
  const skipped: string[] = [];
  const tryAlias = (alias: string, reason: string): ResolvedAlias | undefined => {
    const target = config.aliases[alias];
    if (target === undefined || target.kind === 'embeddings') return undefined;
    if (!takesFields(target)) {
      skipped.push(`${alias}:request_fields`);
      return undefined;
    }
    if (!fitsContextWindow(target, features.prompt)) {
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
    const ruleAlias = config.aliases[rule.use];
    if (ruleAlias === undefined || !conditionHolds(rule.when, features, ruleAlias)) continue;
    const chosen = tryAlias(rule.use, rule.reason);
    if (chosen !== undefined) return chosen;
  }
  const byDefault = tryAlias(config.auto.default, 'default');
  if (byDefault !== undefined) return byDefault;
  // The reason the default was passed over is the reason another alias is used.
  const instead = skipped.includes(`${config.auto.default}:request_fields`) ? 'request_fields' : 'context_window';
  for (const alias of Object.keys(config.aliases)) {
    if (alias === config.auto.default || skipped.some((s) => s.startsWith(`${alias}:`))) continue;
    const chosen = tryAlias(alias, instead);
    if (chosen !== undefined) return chosen;
  }
  // Fields decide; context window and breakers only prefer. The default, or
  // else the first alias that takes the request's fields.
  const defaultAlias = config.aliases[config.auto.default] as AliasConfig;
  if (takesFields(defaultAlias)) return { alias: config.auto.default, config: defaultAlias, reason: 'default', skipped };
  for (const alias of Object.keys(config.aliases)) {
    const candidate = config.aliases[alias] as AliasConfig;
    if (candidate.kind === 'chat' && takesFields(candidate)) return { alias, config: candidate, reason: 'request_fields', skipped };
  }
  // Each field is taken by some alias (the validator saw to that), but no alias takes them all.
  const name = refusedField(defaultAlias, global, fields) as RequestFieldName;
  const refusal = autoRefusal(name, config.auto.default, defaultAlias.requestFields !== null);
  throw issueToError(
    name === 'json_schema'
      ? createIssue(['response_format', 'type'], { code: 'invalid_value', reason: { rule: 'not_accepted', refusal } })
      : createIssue([name], { code: 'unknown_parameter', refusal }),
  );
}

function autoRefusal(name: RequestFieldName, defaultAlias: string, ownList: boolean): FieldRefusal {
  // The top level's list does nothing for an alias with a list of its own.
  const settings = ownList ? [`aliases.${defaultAlias}.requestFields`] : [`aliases.${defaultAlias}.requestFields`, 'requestFields'];
  return { kind: 'not_accepted', name, model: AUTO_ALIAS, settings };
}

/** The first of `fields` that `alias` does not take (its own list, else the top level's). */
function refusedField(alias: AliasConfig, global: readonly RequestFieldName[], fields: readonly RequestFieldName[]): RequestFieldName | undefined {
  const accepted = aliasRequestFields(alias, global);
  return fields.find((name) => !accepted.includes(name));
}

/**
 * The alias an embeddings request names; reason `requested`. A chat alias or
 * service-auto is model_kind_mismatch naming the embeddings models among
 * `usable()` (every alias when not given); an unknown name is
 * model_not_found, as for resolveAlias.
 */
export function resolveEmbeddingsAlias(model: string, config: Pick<GatewayConfig, 'aliases'>, usable?: () => readonly string[]): ResolvedAlias {
  const named = Object.hasOwn(config.aliases, model) ? config.aliases[model] : undefined;
  if (named === undefined && model !== AUTO_ALIAS) throw new ModelNotFoundError(model, usable?.());
  if (named?.kind === 'embeddings') return { alias: model, config: named, reason: 'requested', skipped: [] };
  throw kindMismatch(model, 'chat', config, usable);
}

/** What `name` serves: service-auto is chat; null for a name the config does not define. */
export function aliasKind(config: Pick<GatewayConfig, 'aliases'>, name: string): AliasKind | null {
  if (name === AUTO_ALIAS) return 'chat';
  return Object.hasOwn(config.aliases, name) ? (config.aliases[name] as AliasConfig).kind : null;
}

/** 400 for `model`, an alias of kind `kind`, named by a request of the other kind; names the models of the right kind the caller may use. */
function kindMismatch(model: string, kind: AliasKind, config: Pick<GatewayConfig, 'aliases'>, usable?: () => readonly string[]): ApiError {
  const wanted: AliasKind = kind === 'chat' ? 'embeddings' : 'chat';
  const models = (usable?.() ?? listAliases(config)).filter((name) => aliasKind(config, name) === wanted);
  const message =
    kind === 'embeddings'
      ? `'${model}' is an embeddings model; send it to POST /v1/embeddings, or use ${models.length === 0 ? 'a chat model (this API key may use none)' : `one of the chat models: ${models.join(', ')}`}.`
      : `'${model}' is a chat model; ${models.length === 0 ? 'this API key may use no embeddings model' : `embeddings take one of: ${models.join(', ')}`}.`;
  return new ApiError('model_kind_mismatch', message, { param: 'model' });
}

/** Aliases in listing order: the configured ones, then service-auto. */
export function listAliases(config: Pick<GatewayConfig, 'aliases'>): string[] {
  return [...Object.keys(config.aliases), AUTO_ALIAS];
}
