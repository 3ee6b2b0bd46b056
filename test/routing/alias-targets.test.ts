// Alias targets in production use the breaker registry of
// src/upstream/circuit-breaker.ts: one breaker per provider/model, shared by
// every alias that names the pair, with the provider's own breaker options.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config-parser.ts';
import type { UpstreamPolicy } from '../../src/config/config.ts';
import type { ChatRequest } from '../../src/chat/types.ts';
import { createDemoProvider } from '../../src/providers/demo.ts';
import { createAliasTargets, type ProviderBinding } from '../../src/routing/alias-targets.ts';

const config = parseConfig(
  {
    dataDir: '/tmp/portcullis-alias-targets',
    providers: { demo: { type: 'demo' } },
    aliases: {
      'service-chat': { targets: [{ provider: 'demo', model: 'm1' }] },
      'service-vision': { targets: [{ provider: 'demo', model: 'm1' }, { provider: 'demo', model: 'm2', priority: 1 }] },
    },
    auto: { default: 'service-chat' },
  },
  null,
  '/tmp',
);

const policy: UpstreamPolicy = {
  connectTimeoutMs: 1000,
  firstByteTimeoutMs: 1000,
  idleTimeoutMs: 1000,
  timeoutMs: 1000,
  retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, maxRetryAfterMs: 10 },
  circuitBreaker: { failureThreshold: 2, openMs: 500 },
};

const request: ChatRequest = { model: 'service-chat', messages: [{ role: 'user', content: 'hi' }] };

function routesWith(bindingPolicy: UpstreamPolicy | null): { routes: ReturnType<typeof createAliasTargets>; clock: { now: number } } {
  const clock = { now: 0 };
  const binding: ProviderBinding = { provider: createDemoProvider(), maxTokensParam: 'max_tokens', policy: bindingPolicy };
  return { routes: createAliasTargets(config, new Map([['demo', binding]]), () => clock.now), clock };
}

describe('createAliasTargets', () => {
  test('two aliases naming the same provider/model share one breaker; health lists each target once, in config order', () => {
    const { routes } = routesWith(policy);
    const chat = routes.plan('service-chat', request).targets;
    const vision = routes.plan('service-vision', request).targets;
    assert.equal(chat[0]?.breaker, vision[0]?.breaker);
    assert.notEqual(vision[0]?.breaker, vision[1]?.breaker);
    assert.deepEqual(routes.health(), [
      { id: 'demo/m1', provider: 'demo', model: 'm1', circuit: 'closed', openedAt: null, probeAt: null, lastFailure: null },
      { id: 'demo/m2', provider: 'demo', model: 'm2', circuit: 'closed', openedAt: null, probeAt: null, lastFailure: null },
    ]);
  });

  test("the provider's breaker options apply: failureThreshold 2 opens it, openMs 500 lets a probe through", () => {
    const { routes, clock } = routesWith(policy);
    const breaker = routes.plan('service-chat', request).targets[0]?.breaker;
    assert.ok(breaker !== undefined);
    breaker.onFailure();
    assert.equal(routes.isAvailable('service-chat'), true);
    clock.now = 20;
    breaker.onFailure({ kind: 'refused', detail: 'ECONNREFUSED', address: '127.0.0.1:8000' });
    assert.equal(routes.isAvailable('service-chat'), false);
    // service-vision still has demo/m2.
    assert.equal(routes.isAvailable('service-vision'), true);
    assert.deepEqual(routes.health().map((t) => t.circuit), ['open', 'closed']);
    // When it opened, when it lets a probe through, and why: what /readyz shows.
    const lastFailure = { kind: 'refused', detail: 'ECONNREFUSED', address: '127.0.0.1:8000', at: 20 };
    assert.deepEqual(routes.health()[0], { id: 'demo/m1', provider: 'demo', model: 'm1', circuit: 'open', openedAt: 20, probeAt: 520, lastFailure });
    clock.now = 520;
    assert.deepEqual(routes.health().map((t) => t.circuit), ['half_open', 'closed']);
    assert.deepEqual(routes.health()[0], { id: 'demo/m1', provider: 'demo', model: 'm1', circuit: 'half_open', openedAt: 20, probeAt: null, lastFailure });
  });

  test('the demo provider (no policy) has a breaker that never opens', () => {
    const { routes } = routesWith(null);
    const breaker = routes.plan('service-chat', request).targets[0]?.breaker;
    assert.ok(breaker !== undefined);
    for (let i = 0; i < 1000; i++) breaker.onFailure();
    assert.equal(routes.isAvailable('service-chat'), true);
    assert.equal(routes.plan('service-chat', request).targets[0]?.retry.maxAttempts, 1);
  });
});
