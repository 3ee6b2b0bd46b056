// The guard tests' gateway: a fake OpenAI-compatible upstream that answers
// every chat request "ok" and records what it received, behind the alias
// `service-fake`, with the config's top-level settings (`guard` among them)
// given by each test file (and, if it asks, the gateway's metrics). A test
// may answer otherwise by replacing `upstream.handle`.
import type { GatewayMetrics } from '../../src/metrics/gateway-metrics.ts';
import { startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from './harness.ts';

export interface GuardRig {
  upstream: FakeUpstream;
  gw: TestGateway;
  close(): Promise<void>;
}

const ANSWER = JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

export async function startGuardRig(top: Record<string, unknown>, options: { metrics?: GatewayMetrics } = {}): Promise<GuardRig> {
  const upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(ANSWER);
  });
  const gw = await startGateway({
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    configValue: {
      providers: { fake: { type: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'FAKE_UPSTREAM_KEY', retry: { maxAttempts: 1 } } },
      aliases: { 'service-fake': { provider: 'fake', model: 'upstream-model-1' } },
      ...top,
    },
  });
  return {
    upstream,
    gw,
    async close() {
      await gw.close();
      await upstream.close();
    },
  };
}
