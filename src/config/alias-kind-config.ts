// What an alias's kind means for its settings. A chat alias takes the chat
// settings (maxOutputTokens, contextWindow, capabilities, imageTokens,
// requestFields), an embeddings alias the embeddings ones (acceptsDimensions,
// maxInputsPerCall, at the alias level as its targets' defaults and per
// target); a setting of the other kind is a problem that says which kind
// takes it, rather than silently doing nothing.
import type { AliasKind, GatewayConfig, ProviderConfig, TargetConfig } from './config.ts';
import { join, type Checker, type Obj } from './config-checker.ts';
import { DEFAULT_MAX_INPUTS_PER_CALL } from './provider-defaults.ts';

export const CHAT_ONLY_SETTINGS: readonly string[] = ['maxOutputTokens', 'contextWindow', 'capabilities', 'imageTokens', 'requestFields'];
export const EMBEDDINGS_ONLY_SETTINGS: readonly string[] = ['acceptsDimensions', 'maxInputsPerCall'];

/** The most inputs a config may send in one embeddings call. */
export const MAX_INPUTS_PER_CALL = 100_000;

/** Embeddings settings as given (null: not set here, the next level's default applies). */
export interface EmbeddingsSettings {
  acceptsDimensions: boolean | null;
  maxInputsPerCall: number | null;
}

/** `o` without the settings of the other kind, each reported at its path. */
export function refuseOtherKind(c: Checker, o: Obj, at: string, kind: AliasKind): Obj {
  const other = kind === 'chat' ? EMBEDDINGS_ONLY_SETTINGS : CHAT_ONLY_SETTINGS;
  let rest = o;
  for (const name of other) {
    if (o[name] === undefined) continue;
    c.report(join(at, name), {
      code: 'conflict',
      message:
        kind === 'chat'
          ? 'is an embeddings setting: add "kind": "embeddings" to this alias if it serves embeddings, else remove it'
          : 'is a chat setting; an alias with "kind": "embeddings" does not take it: remove it, or give the chat model an alias of its own',
    });
    if (rest === o) rest = { ...o };
    delete rest[name];
  }
  return rest;
}

/** The embeddings settings `o` gives, else `inherited`. */
export function embeddingsSettings(c: Checker, o: Obj, at: string, inherited: EmbeddingsSettings): EmbeddingsSettings {
  return {
    acceptsDimensions: c.optional(o, 'acceptsDimensions', at, inherited.acceptsDimensions, (v, vat) => c.boolean(v, vat)),
    maxInputsPerCall: c.optional(o, 'maxInputsPerCall', at, inherited.maxInputsPerCall, (v, vat) => c.integer(v, vat, 1, MAX_INPUTS_PER_CALL)),
  };
}

/**
 * The most inputs one embeddings call to `target` carries: its setting (or
 * its alias's), else its provider type's default. 1 for a type with none
 * (the parser keeps such targets out of embeddings aliases).
 */
export function maxInputsPerCall(target: Pick<TargetConfig, 'maxInputsPerCall'>, provider: Pick<ProviderConfig, 'type'> | undefined): number {
  if (target.maxInputsPerCall !== null) return target.maxInputsPerCall;
  const type = provider?.type;
  return type === 'openai' || type === 'demo' ? DEFAULT_MAX_INPUTS_PER_CALL[type] : 1;
}

/** The aliases in config order as the CLI prints them: an embeddings alias marked `text-embed (embeddings)`. */
export function aliasLabels(aliases: Readonly<Record<string, { readonly kind: AliasKind }>>): string[] {
  return Object.entries(aliases).map(([name, a]) => (a.kind === 'embeddings' ? `${name} (embeddings)` : name));
}

/**
 * Embeddings aliases whose targets name more than one upstream model, with
 * those models: a fallback (or a weighted share) to another model answers
 * vectors that cannot be compared with the first model's. The demo's vectors
 * are its own, whatever its target's model is called (`name (demo)`). The same
 * model under two names (an Azure deployment of OpenAI's) is the operator's to
 * know, so this is a warning, not a config error.
 */
export function mixedEmbeddingsModels(config: Pick<GatewayConfig, 'aliases' | 'providers'>): Array<{ alias: string; models: string[] }> {
  const mixed: Array<{ alias: string; models: string[] }> = [];
  for (const [alias, aliasConfig] of Object.entries(config.aliases)) {
    if (aliasConfig.kind !== 'embeddings') continue;
    const models = [...new Set(aliasConfig.targets.map((t) => (config.providers[t.provider]?.type === 'demo' ? `${t.model} (demo)` : t.model)))];
    if (models.length > 1) mixed.push({ alias, models });
  }
  return mixed;
}
