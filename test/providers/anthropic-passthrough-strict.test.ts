// A Messages client's request against a fake Anthropic that holds the body to
// Anthropic's documented constraints and the headers to its version and beta
// rules: the betas a client sends that the upstream would refuse ("invalid
// beta flag") are dropped by the default list, and named for the access line.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_ANTHROPIC_BETAS } from '../../src/config/provider-defaults.ts';
import { ProviderKind, type HttpProvider } from '../../src/upstream/provider.ts';
import { refuseLikeAnthropic } from './anthropic-constraints.ts';
import { json, providerFor } from './anthropic-fixtures.ts';
import { anthropicHeaderViolation, refuseHeadersLikeAnthropic } from './anthropic-header-constraints.ts';
import { origin, originCall, RICH_ANSWER } from './messages-origin-fixtures.ts';
import { failure, rendered, useFakeUpstream } from './provider-fixtures.ts';

const upstream = useFakeUpstream((res, received) => refuseHeadersLikeAnthropic(res, received.headers) || refuseLikeAnthropic(res, received.text));
upstream.handle = (_req, res) => json(res, 200, RICH_ANSWER);

/** An SDK-style body inside what the strict fake models. */
const BODY = {
  model: 'claude-haiku-5-5',
  max_tokens: 1024,
  system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
  metadata: { user_id: 'user_1' },
  temperature: 0.5,
};
const BETAS = ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'made-up-2099-01-01', 'context-management-2025-06-27'];

describe('betas against a strict Anthropic', () => {
  test('every default beta is one Anthropic takes', () => {
    for (const beta of DEFAULT_ANTHROPIC_BETAS) assert.equal(anthropicHeaderViolation({ 'anthropic-version': '2023-06-01', 'anthropic-beta': beta }), undefined, beta);
  });

  test('the default list drops what the upstream would refuse; the request is taken; the notes name what was dropped', async () => {
    upstream.handle = (_req, res) => json(res, 200, RICH_ANSWER);
    const driven = providerFor(upstream);
    const call = originCall(origin({ body: BODY, version: '2023-06-01', betas: BETAS }), { max_tokens: 512, stream: false });
    const completion = await driven.complete(call);
    assert.equal(completion.choices[0]?.finish_reason, 'tool_calls');
    assert.equal(upstream.received[0]?.headers['anthropic-beta'], 'claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27');
    assert.equal(upstream.received[0]?.text, JSON.stringify({ ...BODY, model: 'claude-opus-upstream', max_tokens: 512 }));
    assert.equal(driven.provider.kind, ProviderKind.Http);
    assert.deepEqual((driven.provider as HttpProvider).requestNotes?.(call.request), { betasDropped: 'made-up-2099-01-01' });
  });

  test('["*"] passes the unknown beta on: the upstream refuses it and the client reads its 400', async () => {
    const driven = providerFor(upstream, { anthropicBetas: ['*'] });
    const thrown = await failure(driven.complete(originCall(origin({ body: BODY, betas: BETAS }), { stream: false })));
    assert.deepEqual(rendered(thrown).body, {
      error: { message: 'Unsupported beta header: made-up-2099-01-01', type: 'invalid_request_error', param: null, code: null },
    });
    assert.equal(upstream.received[0]?.headers['anthropic-beta'], BETAS.join(','));
  });
});
