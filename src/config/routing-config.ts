// The routing sections of the config: "aliases" (each a provider and model, or
// weighted targets with fallbacks) and "auto" (the service-auto rules). Same
// rules as the rest of the parser: every problem is collected with its path.
import {
  ALIAS_KINDS,
  AUTO_ALIAS,
  CAPABILITIES,
  DEFAULT_IMAGE_TOKENS,
  HOST_PROVIDER,
  type AliasConfig,
  type AliasKind,
  type AutoCondition,
  type AutoRule,
  type Capability,
  type GatewayConfig,
  type Price,
  type TargetConfig,
} from './config.ts';
import { join, type Checker, type Obj } from './config-checker.ts';
import { parsePrice } from './price-config.ts';
import { parseRequestFields } from './request-fields-config.ts';
import { embeddingsSettings, refuseOtherKind, type EmbeddingsSettings } from './alias-kind-config.ts';
import { parseAliasGuard } from './guard-config.ts';

const ALIAS_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
const ALIAS_SETTINGS = ['kind', 'provider', 'model', 'targets', 'maxOutputTokens', 'contextWindow', 'capabilities', 'price', 'imageTokens', 'requestFields', 'acceptsDimensions', 'maxInputsPerCall', 'guard'];
const TARGET_SETTINGS = ['provider', 'model', 'weight', 'priority', 'price', 'acceptsDimensions', 'maxInputsPerCall'];
/** A demo answer costs nothing unless a price is given for it. */
const FREE: Price = { input: 0, cachedInput: 0, output: 0 };

/** What the alias parser needs to know of "providers". */
interface ProviderNames {
  /** Every name defined, or null when "providers" itself is broken (a reference cannot be judged then). */
  defined: ReadonlySet<string> | null;
  /** The type of each provider parsed without problems: demo targets are free unless priced, anthropic serves no embeddings. */
  types: ReadonlyMap<string, string>;
}

/** What a target takes from its alias besides the price. */
interface AliasDefaults {
  kind: AliasKind;
  /** False when the alias's kind is itself wrong: the settings of either kind are then not judged by it. */
  kindKnown: boolean;
  embeddings: EmbeddingsSettings;
}
const CONDITION_KEYS = ['images', 'tools', 'jsonObject', 'stream', 'minPromptTokens'] as const;

/** Returns null when "aliases" is missing or not an object. */
export function parseAliases(c: Checker, value: unknown, providers: ProviderNames): Record<string, AliasConfig> | null {
  if (value === undefined) return c.report('aliases', { code: 'required' }) ?? null;
  const aliasesIn = c.map(value, 'aliases');
  if (aliasesIn === undefined) return null;
  const aliases: Record<string, AliasConfig> = {};
  for (const [name, a] of Object.entries(aliasesIn)) {
    const at = join('aliases', name);
    if (name === AUTO_ALIAS) c.report(at, { code: 'reserved', message: `'${AUTO_ALIAS}' is reserved for automatic routing; configure it under "auto"` });
    else if (!ALIAS_NAME.test(name)) c.report(at, { code: 'invalid_name', message: 'alias names use letters, digits, ".", "_", ":" and "-" (at most 64)' });
    aliases[name] = parseAlias(c, a, at, name, providers);
  }
  if (Object.keys(aliases).length === 0) c.report('aliases', { code: 'required', message: 'must define at least one alias' });
  else if (Object.values(aliases).every((a) => a.kind === 'embeddings')) {
    c.report('aliases', { code: 'required', message: `must define at least one chat alias (without "kind": "embeddings"): ${AUTO_ALIAS} routes chat requests to one` });
  }
  return aliases;
}

function parseAlias(c: Checker, value: unknown, at: string, name: string, providers: ProviderNames): AliasConfig {
  const alias: AliasConfig = { kind: 'chat', targets: [], maxOutputTokens: null, contextWindow: null, capabilities: [], price: null, imageTokens: DEFAULT_IMAGE_TOKENS, requestFields: null, guard: null };
  const given = c.object(value, at, ALIAS_SETTINGS);
  if (given === undefined) return alias;
  alias.kind = c.optional(given, 'kind', at, 'chat' as AliasKind, (v, vat) => c.oneOf(v, vat, ALIAS_KINDS));
  const kindKnown = given['kind'] === undefined || given['kind'] === alias.kind;
  const o = kindKnown ? refuseOtherKind(c, given, at, alias.kind) : given;
  // An embeddings answer has no output tokens: its price needs only input.
  alias.price = c.optional(o, 'price', at, null, (v, vat) => parsePrice(c, v, vat, alias.kind === 'chat'));
  const defaults: AliasDefaults = { kind: alias.kind, kindKnown, embeddings: embeddingsSettings(c, o, at, { acceptsDimensions: null, maxInputsPerCall: null }) };
  alias.targets = parseTargets(c, o, at, name, providers, defaults);
  // A target inherits the alias's price; a demo target without either is free.
  for (const target of alias.targets) target.price ??= alias.price ?? (providers.types.get(target.provider) === 'demo' ? FREE : null);
  alias.imageTokens = c.int(o, 'imageTokens', at, DEFAULT_IMAGE_TOKENS, 1, 1_000_000);
  alias.maxOutputTokens = c.optional(o, 'maxOutputTokens', at, null, (v, vat) => c.integer(v, vat, 1, 10_000_000));
  alias.contextWindow = c.optional(o, 'contextWindow', at, null, (v, vat) => c.integer(v, vat, 256, 100_000_000));
  alias.requestFields = parseRequestFields(c, o, at, null);
  alias.guard = parseAliasGuard(c, o['guard'], join(at, 'guard'));
  if (o['capabilities'] === undefined) return alias;
  const cat = join(at, 'capabilities');
  if (!Array.isArray(o['capabilities'])) {
    c.report(cat, { code: 'not_array', message: `must be an array of ${CAPABILITIES.map((x) => `"${x}"`).join(', ')}` });
    return alias;
  }
  o['capabilities'].forEach((v: unknown, i: number) => {
    const cap = c.oneOf(v, `${cat}[${i}]`, CAPABILITIES);
    if (cap !== undefined && !alias.capabilities.includes(cap)) alias.capabilities.push(cap);
  });
  return alias;
}

function parseTargets(c: Checker, o: Obj, at: string, aliasName: string, providers: ProviderNames, defaults: AliasDefaults): TargetConfig[] {
  if (o['targets'] === undefined) {
    if (o['provider'] === undefined) return c.report(join(at, 'provider'), { code: 'required', hint: '(or give "targets")' }) ?? [];
    // The alias's own embeddings settings are already its defaults.
    return [parseTarget(c, { provider: o['provider'], ...(o['model'] === undefined ? {} : { model: o['model'] }) }, at, aliasName, providers, defaults)];
  }
  if (o['provider'] !== undefined || o['model'] !== undefined) c.report(at, { code: 'conflict', message: 'give either "provider" (and "model") or "targets", not both' });
  const tat = join(at, 'targets');
  const targets = o['targets'];
  if (!Array.isArray(targets) || targets.length === 0) return c.report(tat, { code: 'not_array', message: 'must be a non-empty array' }) ?? [];
  if (targets.length > 16) return c.report(tat, { code: 'too_many', message: 'must have at most 16 entries' }) ?? [];
  return targets.map((t: unknown, i: number) => parseTarget(c, t, `${tat}[${i}]`, aliasName, providers, defaults));
}

function parseTarget(c: Checker, value: unknown, at: string, aliasName: string, providers: ProviderNames, defaults: AliasDefaults): TargetConfig {
  const target: TargetConfig = { provider: '', model: aliasName, weight: 1, priority: 0, price: null, acceptsDimensions: false, maxInputsPerCall: null };
  const given = c.object(value, at, TARGET_SETTINGS);
  if (given === undefined) return target;
  const o = defaults.kindKnown ? refuseOtherKind(c, given, at, defaults.kind) : given;
  const pat = join(at, 'provider');
  const provider = c.string(o['provider'], pat);
  if (provider !== undefined && providers.defined !== null && !providers.defined.has(provider)) {
    c.report(pat, { code: 'unknown_reference', kind: 'provider', name: provider });
  }
  const type = provider === undefined ? undefined : providers.types.get(provider);
  if (defaults.kind === 'embeddings' && type === 'anthropic') {
    c.report(pat, { code: 'invalid_value', message: `names provider '${provider}' of type "anthropic": Anthropic has no embeddings API; use an openai or demo provider` });
  }
  if (defaults.kind === 'embeddings' && type === HOST_PROVIDER) {
    c.report(pat, { code: 'invalid_value', message: `names provider '${provider}' of a type the host added: such types serve chat aliases only; use an openai or demo provider` });
  }
  target.provider = provider ?? '';
  target.model = c.optional(o, 'model', at, aliasName, (v, vat) => c.string(v, vat));
  target.weight = c.int(o, 'weight', at, 1, 1, 1000);
  target.priority = c.int(o, 'priority', at, 0, 0, 100);
  target.price = c.optional(o, 'price', at, null, (v, vat) => parsePrice(c, v, vat, defaults.kind === 'chat'));
  if (defaults.kind === 'embeddings') {
    const own = embeddingsSettings(c, o, at, defaults.embeddings);
    // The demo makes vectors of any width; a real model takes dimensions only when the config says so.
    target.acceptsDimensions = own.acceptsDimensions ?? type === 'demo';
    target.maxInputsPerCall = own.maxInputsPerCall;
  }
  return target;
}

/** `aliases`: null when "aliases" is broken; references to aliases are not judged then. */
export function parseAuto(c: Checker, value: unknown, aliases: Record<string, AliasConfig> | null): GatewayConfig['auto'] {
  const names = aliases === null ? [] : Object.keys(aliases);
  const chat = names.filter((name) => aliases?.[name]?.kind === 'chat');
  const known = (name: string, at: string): void => {
    if (aliases === null || names.length === 0) return;
    if (!Object.hasOwn(aliases, name)) c.report(at, { code: 'unknown_reference', kind: 'alias', name });
    else if (aliases[name]?.kind === 'embeddings') {
      const instead = chat.length === 0 ? 'define a chat alias and name it here' : `name a chat alias (${chat.join(', ')})`;
      c.report(at, { code: 'invalid_value', message: `names '${name}', an embeddings alias; ${AUTO_ALIAS} routes chat requests: ${instead}` });
    }
  };
  const first = chat[0] ?? '';
  const defaults = aliases === null ? [] : defaultAutoRules(aliases);
  if (value === undefined) return { default: first, rules: defaults };
  const a = c.object(value, 'auto', ['default', 'rules']);
  if (a === undefined) return { default: first, rules: defaults };
  const def = c.optional(a, 'default', 'auto', first, (v, at) => c.string(v, at));
  if (a['default'] !== undefined) known(def, 'auto.default');
  if (a['rules'] === undefined) return { default: def, rules: defaults };
  if (!Array.isArray(a['rules'])) return { default: def, rules: c.report('auto.rules', { code: 'not_array', message: 'must be an array' }) ?? [] };
  if (a['rules'].length > 64) return { default: def, rules: c.report('auto.rules', { code: 'too_many', message: 'must have at most 64 entries' }) ?? [] };
  const rules = a['rules'].map((r: unknown, i: number) => parseRule(c, r, `auto.rules[${i}]`, known));
  return { default: def, rules };
}

function parseRule(c: Checker, value: unknown, at: string, known: (name: string, at: string) => void): AutoRule {
  const rule: AutoRule = { when: {}, use: '', reason: 'rule' };
  const o = c.object(value, at, ['when', 'use', 'reason']);
  if (o === undefined) return rule;
  const use = c.string(o['use'], join(at, 'use'));
  if (use !== undefined) known(use, join(at, 'use'));
  rule.use = use ?? '';
  const wat = join(at, 'when');
  const w = c.object(o['when'], wat, CONDITION_KEYS);
  if (w !== undefined) {
    for (const key of ['images', 'tools', 'jsonObject', 'stream'] as const) {
      const flag = c.optional(w, key, wat, undefined, (v, vat) => c.boolean(v, vat));
      if (flag !== undefined) rule.when[key] = flag;
    }
    const minPromptTokens = c.optional(w, 'minPromptTokens', wat, undefined, (v, vat) => c.integer(v, vat, 1, 100_000_000));
    if (minPromptTokens !== undefined) rule.when.minPromptTokens = minPromptTokens;
    if (Object.keys(w).length === 0) c.report(wat, { code: 'required', message: 'must hold at least one condition' });
  }
  rule.reason = c.optional(o, 'reason', at, defaultReason(rule.when), (v, vat) => {
    const reason = c.string(v, vat);
    if (reason === undefined || /^[A-Za-z0-9_.:-]{1,64}$/.test(reason)) return reason;
    return c.report(vat, { code: 'invalid_name', message: 'use letters, digits, "_", ".", ":" and "-" (at most 64)' });
  });
  return rule;
}

function defaultReason(when: AutoCondition): string {
  if (when.images === true) return 'image_url';
  if (when.tools === true) return 'tools';
  if (when.jsonObject === true) return 'json_object';
  if (when.minPromptTokens !== undefined) return 'prompt_tokens';
  if (when.stream !== undefined) return when.stream ? 'stream' : 'no_stream';
  return 'rule';
}

/**
 * The rules service-auto uses when the config gives none: images go to the
 * first alias declaring "vision", tools to the first declaring "tools",
 * json_object to the first declaring "json". Aliases without capabilities
 * add no rule, so a one-alias config routes everything to it.
 */
export function defaultAutoRules(aliases: Record<string, AliasConfig>): AutoRule[] {
  const rules: AutoRule[] = [];
  // Capabilities are chat settings: an embeddings alias has none.
  const first = (cap: Capability): string | undefined => Object.keys(aliases).find((n) => aliases[n]?.capabilities.includes(cap));
  const vision = first('vision');
  if (vision !== undefined) rules.push({ when: { images: true }, use: vision, reason: 'image_url' });
  const tools = first('tools');
  if (tools !== undefined) rules.push({ when: { tools: true }, use: tools, reason: 'tools' });
  const json = first('json');
  if (json !== undefined) rules.push({ when: { jsonObject: true }, use: json, reason: 'json_object' });
  return rules;
}
