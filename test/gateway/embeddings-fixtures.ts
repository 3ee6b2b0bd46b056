// The embeddings tests' gateway: a fake OpenAI-compatible upstream answering
// POST /v1/embeddings (../support/fake-embeddings.ts), an "openai" provider
// `fake` on it behind the embeddings alias `text-embed`, the demo behind the
// chat alias `service-chat`. Both transports, as every upstream test.
import type { ServerResponse } from 'node:http';
import { eventually } from '../support/eventually.ts';
import { fakeEmbeddingsAnswer, type FakeEmbeddingsOptions } from '../support/fake-embeddings.ts';
import { request, startFakeUpstream, startGateway, type FakeUpstream, type RawResponse, type StartGatewayOptions, type TestGateway, type UpstreamRequest } from './harness.ts';

export const TRANSPORTS = ['fetch', 'node'] as const;

export interface EmbeddingsSetup {
  transport?: 'fetch' | 'node';
  /** Merged over the `fake` provider. */
  provider?: Record<string, unknown>;
  /** Merged over the `text-embed` alias. */
  alias?: Record<string, unknown>;
  /** More aliases. */
  aliases?: Record<string, unknown>;
  /** More providers. */
  providers?: Record<string, unknown>;
  /** The top-level `embeddings` section. */
  embeddings?: Record<string, unknown>;
  /** Other top-level settings. */
  top?: Record<string, unknown>;
  gateway?: Omit<StartGatewayOptions, 'configValue'>;
}

export interface EmbeddingsRig {
  gw: TestGateway;
  upstream: FakeUpstream;
  /** What the upstream answers; replace between requests. */
  answer: (req: UpstreamRequest, res: ServerResponse) => void | Promise<void>;
  close(): Promise<void>;
}

/** Answers every embeddings request with the fake's vectors. */
export function answering(options: FakeEmbeddingsOptions = {}): EmbeddingsRig['answer'] {
  return (req, res) => {
    const body = JSON.stringify(fakeEmbeddingsAnswer(req.body as Parameters<typeof fakeEmbeddingsAnswer>[0], options));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  };
}

export async function startEmbeddingsRig(setup: EmbeddingsSetup = {}): Promise<EmbeddingsRig> {
  const rig = { answer: answering() } as EmbeddingsRig;
  const upstream = await startFakeUpstream((req, res) => rig.answer(req, res));
  const configValue = {
    providers: {
      demo: { type: 'demo' },
      fake: {
        type: 'openai',
        baseUrl: upstream.baseUrl,
        apiKeyEnv: 'FAKE_UPSTREAM_KEY',
        transport: setup.transport ?? 'fetch',
        retry: { maxAttempts: 1 },
        circuitBreaker: { failureThreshold: 1000 },
        ...setup.provider,
      },
      ...setup.providers,
    },
    aliases: {
      'service-chat': { provider: 'demo', model: 'portcullis-demo' },
      'text-embed': { kind: 'embeddings', provider: 'fake', model: 'upstream-embed', ...setup.alias },
      ...setup.aliases,
    },
    auto: { default: 'service-chat' },
    ...(setup.embeddings === undefined ? {} : { embeddings: setup.embeddings }),
    ...setup.top,
  };
  rig.gw = await startGateway({ ...setup.gateway, configValue });
  rig.upstream = upstream;
  rig.close = async () => {
    await rig.gw.close();
    await upstream.close();
  };
  return rig;
}

/** POST /v1/embeddings with JSON and the rig's key. */
export function postEmbeddings(gw: TestGateway, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return request(gw.baseUrl, 'POST', '/v1/embeddings', {
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.key}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The access line of the request with id `requestId` (written as its response closes). */
export async function accessLine(gw: TestGateway, requestId: string | string[] | undefined): Promise<Record<string, unknown>> {
  const find = (): Record<string, unknown> | undefined => gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId);
  await eventually(() => find() !== undefined, `the access line of ${String(requestId)}`);
  return find() as Record<string, unknown>;
}
