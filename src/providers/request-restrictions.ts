// Which requests each provider type's adapter refuses that another type takes,
// as data, and the check-config warning for an alias whose targets differ: a
// request one target refuses skips it (../upstream/dispatcher.ts), so while the
// other targets fail it fails too, and the alias's fallback is not the
// fallback the operator may think it is. A map over the config's type names,
// so a new type without an entry does not compile.
import type { GatewayConfig, ProviderConfig } from '../config/config.ts';
import { aliasRequestFields } from '../config/request-fields-config.ts';
import { providerTypeName } from '../config/provider-types.ts';
import { ConfigWarningCode, type ConfigWarning } from '../config/config-issues.ts';
import { ANTHROPIC_REFUSES } from './anthropic-request.ts';
import type { RequestRestriction } from './request-restriction.ts';

export const REQUEST_RESTRICTIONS: { readonly [T in ProviderConfig['type']]: readonly RequestRestriction[] } = {
  openai: [],
  anthropic: ANTHROPIC_REFUSES,
  demo: [],
  // A host type's refusals are its codec's code, not data check-config can compare.
  host: [],
};

/** One warning per alias whose targets' provider types refuse different requests, naming what each refuses that another takes. */
export function aliasTargetWarnings(config: Pick<GatewayConfig, 'aliases' | 'providers'> & { readonly requestFields?: GatewayConfig['requestFields'] }): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  for (const [alias, { targets, requestFields }] of Object.entries(config.aliases)) {
    // A rule about a field beyond the contract's table matters only where the alias takes the field.
    const accepted = aliasRequestFields({ requestFields }, config.requestFields);
    const applies = (r: RequestRestriction): boolean => r.fields.length === 0 || r.fields.some((f) => accepted.includes(f));
    const typed = targets.map((t) => {
      const provider = config.providers[t.provider];
      const type = provider === undefined ? undefined : providerTypeName(provider);
      return { id: `${t.provider}/${t.model}`, type, refuses: provider === undefined ? [] : REQUEST_RESTRICTIONS[provider.type].filter(applies).map((r) => r.rule) };
    });
    const parts: string[] = [];
    for (const target of typed) {
      // What this target refuses and at least one other target takes.
      const takers = typed.filter((other) => other !== target && target.refuses.some((r) => !other.refuses.includes(r)));
      if (takers.length === 0) continue;
      const differs = target.refuses.filter((r) => takers.some((other) => !other.refuses.includes(r)));
      parts.push(`${target.id} (${target.type}) refuses ${differs.join('; ')}; which ${takers.map((t) => `${t.id} (${t.type})`).join(', ')} take${takers.length === 1 ? 's' : ''}`);
    }
    if (parts.length === 0) continue;
    warnings.push({
      code: ConfigWarningCode.AliasTargetsDiffer,
      path: `aliases.${alias}.targets`,
      message:
        `the targets take different requests: ${parts.join('. ')}. ` +
        'Such a request is never sent to a target that refuses it, so it fails when the targets that take it fail; give those requests an alias of their own, or mix only targets of one provider type',
    });
  }
  return warnings;
}
