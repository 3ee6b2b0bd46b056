// The aliases view: each alias, its kind, whether it can serve now, and its
// targets in order with their circuit breaker state, and the prices when configured.
import { adminApi } from './api.ts';
import type { AliasCatalogue, AliasInfo, ApiFailure } from './admin-model.ts';
import { byId, el } from './dom.ts';
import { CIRCUIT_LABEL, formatCount } from './format.ts';
import { formatPrice } from './money.ts';

interface AliasesView {
  load(): Promise<AliasCatalogue | null>;
  /** The catalogue as last loaded; loads it once if the view was never opened. */
  catalogue(): Promise<AliasCatalogue | null>;
  reset(): void;
}

export function createAliasesView(failed: (failure: ApiFailure) => void): AliasesView {
  const list = byId('aliases-list', HTMLElement);
  const auto = byId('auto-routing', HTMLElement);
  let catalogue: AliasCatalogue | null = null;

  async function load(): Promise<AliasCatalogue | null> {
    list.setAttribute('aria-busy', 'true');
    const outcome = await adminApi.aliases();
    list.removeAttribute('aria-busy');
    if (!outcome.ok) {
      failed(outcome.failure);
      return null;
    }
    catalogue = outcome.value;
    render(catalogue);
    return catalogue;
  }

  function render(c: AliasCatalogue): void {
    list.replaceChildren(...c.data.map((alias) => aliasCard(alias, c.currency ?? '')));
    if (c.data.length === 0) list.append(el('p', { text: 'No aliases are configured.' }));
    if (c.auto === null) {
      auto.replaceChildren(el('p', { text: 'service-auto is not configured.' }));
      return;
    }
    auto.replaceChildren(
      el('p', {}, ['service-auto uses ', el('code', { text: c.auto.default }), ' unless a rule below matches.']),
      c.auto.rules.length === 0
        ? el('p', { className: 'hint', text: 'No routing rules.' })
        : el(
            'ol',
            { className: 'rules' },
            c.auto.rules.map((r) => el('li', {}, [el('code', { text: r.use }), ` when ${r.reason}`])),
          ),
    );
  }

  return {
    load,
    catalogue: async () => catalogue ?? (await load()),
    reset() {
      catalogue = null;
      list.replaceChildren();
      auto.replaceChildren();
    },
  };
}

const UNPRICED = 'Unpriced';

/**
 * The alias's price; else "per target" when each target has its own; else
 * unpriced, and what that means: its answers cost nothing in the records, so
 * the gateway refuses it (403) to keys with a spending budget.
 */
function aliasPrice(alias: AliasInfo, currency: string): string {
  if (alias.price != null) return formatPrice(alias.price, currency);
  if (alias.targets.length > 0 && alias.targets.every((t) => t.price != null)) return 'Per target (below)';
  return `${UNPRICED}: its requests count no cost, so keys with a spending budget are refused it (403)`;
}

/** The chat settings, or for an embeddings alias what its targets take (the chat settings do not apply to it). */
function kindFacts(alias: AliasInfo): Array<[string, string, string?]> {
  if (alias.kind === 'embeddings') {
    const dimensions = alias.targets.filter((t) => t.acceptsDimensions === true).map((t) => t.id);
    return [
      ['Kind', 'Embeddings (POST /v1/embeddings)', 'alias-kind'],
      ['Takes dimensions', dimensions.length === 0 ? 'No target' : dimensions.length === alias.targets.length ? 'Every target' : dimensions.join(', ')],
      ['Inputs per call', [...new Set(alias.targets.map((t) => (t.maxInputsPerCall === undefined ? '?' : formatCount(t.maxInputsPerCall))))].join(' / ')],
    ];
  }
  return [
    ['Kind', 'Chat', 'alias-kind'],
    ['Context window', alias.contextWindow === null ? 'Not set' : `${formatCount(alias.contextWindow)} tokens`],
    ['Max output', alias.maxOutputTokens === null ? 'Not set' : `${formatCount(alias.maxOutputTokens)} tokens`],
    ['Capabilities', alias.capabilities.length === 0 ? 'Text' : alias.capabilities.join(', ')],
    ['Request fields', (alias.requestFields ?? []).length === 0 ? "The contract's table" : `Also ${(alias.requestFields ?? []).join(', ')}`, 'alias-request-fields'],
  ];
}

function aliasCard(alias: AliasInfo, currency: string): HTMLElement {
  const facts = kindFacts(alias);
  facts.push(['Price', aliasPrice(alias, currency), 'alias-price']);
  const head = ['Target', 'Provider', 'Model', 'Priority', 'Weight', 'Health', 'Price'];
  return el('article', { className: 'card alias-card', testId: 'alias-card', attrs: { 'data-alias': alias.alias } }, [
    el('header', { className: 'alias-head' }, [
      el('h2', {}, [el('code', { text: alias.alias })]),
      el('span', { className: `badge ${alias.available ? 'badge-active' : 'badge-revoked'}`, text: alias.available ? 'Available' : 'Unavailable', testId: 'alias-available' }),
    ]),
    el('dl', { className: 'facts' }, facts.flatMap(([term, value, testId]) => [el('dt', { text: term }), el('dd', { text: value, ...(testId === undefined ? {} : { testId }) })])),
    el('div', { className: 'table-wrap' }, [
      el('table', { className: 'data-table targets stacking-table' }, [
        el('caption', { className: 'visually-hidden', text: `Targets of ${alias.alias}, in the order they are tried` }),
        el('thead', {}, [el('tr', {}, head.map((h) => el('th', { text: h, attrs: { scope: 'col' } })))]),
        el(
          'tbody',
          {},
          alias.targets.map((t) =>
            el('tr', { testId: 'alias-target' }, [
              el('th', { attrs: { scope: 'row', 'data-label': 'Target' } }, [el('code', { text: t.id })]),
              el('td', { text: t.provider, attrs: { 'data-label': 'Provider' } }),
              el('td', { attrs: { 'data-label': 'Model' } }, [el('code', { text: t.model })]),
              el('td', { className: 'num', text: String(t.priority), attrs: { 'data-label': 'Priority' } }),
              el('td', { className: 'num', text: String(t.weight), attrs: { 'data-label': 'Weight' } }),
              el('td', { attrs: { 'data-label': 'Health' } }, [
                el('span', { className: `badge circuit-${t.circuit}`, text: CIRCUIT_LABEL[t.circuit], testId: 'circuit-badge', attrs: { title: `Circuit ${t.circuit.replace('_', '-')}` } }),
              ]),
              el('td', { className: 'price', text: t.price == null ? UNPRICED : formatPrice(t.price, currency), testId: 'target-price', attrs: { 'data-label': 'Price' } }),
            ]),
          ),
        ),
      ]),
    ]),
  ]);
}
