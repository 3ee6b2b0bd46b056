// The gateway as a Messages client meets it, for the tests of the Messages
// door with real clients (the Anthropic SDK, the AI SDK, Claude Code): the
// three model names Claude Code sends are aliases, all served by one strict
// scripted upstream of the kind asked for (../support/scripted-upstreams.ts),
// each with an output cap below Claude Code's max_tokens and a price, so a
// request's clamp, usage and cost can be checked on the key.
import { once } from 'node:events';
import http from 'node:http';
import type { KeySettingsInput } from '../../src/keys/key-settings.ts';
import { SCRIPTED_UPSTREAM_KEY, startScriptedAnthropic, startScriptedOpenAI, type ScriptedOptions, type ScriptedUpstream } from '../support/scripted-upstreams.ts';
import { eventually } from '../support/eventually.ts';
import { request, startGateway, type RawResponse, type TestGateway } from './harness.ts';

export type UpstreamKind = 'anthropic' | 'openai';
export const UPSTREAM_KINDS: readonly UpstreamKind[] = ['anthropic', 'openai'];

/** Claude Code's main model and the two small ones it knows. */
export const OPUS = 'claude-opus-5-5';
export const HAIKU_5 = 'claude-haiku-5-5';
export const HAIKU_4 = 'claude-haiku-4-5';
export const CLAUDE_CODE_ALIASES = [OPUS, HAIKU_5, HAIKU_4] as const;

/** The model name each alias sends upstream. */
export const UPSTREAM_MODEL: Readonly<Record<string, string>> = { [OPUS]: 'opus-upstream-1', [HAIKU_5]: 'haiku5-upstream-1', [HAIKU_4]: 'haiku4-upstream-1' };
/** Below Claude Code's max_tokens (128000): the clamp is visible upstream. */
export const OUTPUT_CAP = 8192;
/** Per million tokens. */
export const PRICE = { input: 3, output: 15 };

export interface MessagesSetup {
  kind: UpstreamKind;
  gw: TestGateway;
  upstream: ScriptedUpstream;
  close(): Promise<void>;
}

export interface MessagesSetupOptions extends ScriptedOptions {
  keySettings?: KeySettingsInput;
  /** Config beside providers and aliases (limits...). */
  extraConfig?: Record<string, unknown>;
}

export function providerConfig(kind: UpstreamKind, baseUrl: string, policy: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: kind,
    baseUrl,
    apiKeyEnv: 'SCRIPTED_KEY',
    // One attempt and a breaker that never opens: each test sees the answer it scripted.
    retry: { maxAttempts: 1 },
    circuitBreaker: { failureThreshold: 1000 },
    ...policy,
  };
}

export async function startMessagesGateway(kind: UpstreamKind, options: MessagesSetupOptions = {}): Promise<MessagesSetup> {
  const { keySettings, extraConfig, ...scripted } = options;
  const upstream = kind === 'anthropic' ? await startScriptedAnthropic(scripted) : await startScriptedOpenAI(scripted);
  const aliases: Record<string, unknown> = {};
  for (const alias of CLAUDE_CODE_ALIASES) aliases[alias] = { provider: 'up', model: UPSTREAM_MODEL[alias], maxOutputTokens: OUTPUT_CAP, price: PRICE };
  const gw = await startGateway({
    configValue: { providers: { up: providerConfig(kind, upstream.baseUrl) }, aliases, auto: { default: OPUS }, ...extraConfig },
    env: { SCRIPTED_KEY: SCRIPTED_UPSTREAM_KEY },
    ...(keySettings === undefined ? {} : { keySettings }),
  });
  return {
    kind,
    gw,
    upstream,
    async close() {
      await gw.close();
      await upstream.close();
    },
  };
}

/** POST /v1/messages (or a path given) with the key as x-api-key, Claude Code's way. */
export function postMessages(gw: TestGateway, body: unknown, headers: Record<string, string> = {}, path = '/v1/messages'): Promise<RawResponse> {
  return request(gw.baseUrl, 'POST', path, {
    headers: { 'content-type': 'application/json', 'x-api-key': gw.key, 'anthropic-version': '2023-06-01', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The access line of a request, once written. */
export async function accessLine(gw: TestGateway, requestId: string): Promise<Record<string, unknown>> {
  await eventually(() => gw.logs.some((l) => l['msg'] === 'request' && l['requestId'] === requestId), `the access line of ${requestId}`);
  return gw.logs.find((l) => l['msg'] === 'request' && l['requestId'] === requestId) as Record<string, unknown>;
}

/** Every access line of a Messages request, in order. */
export function messagesLines(gw: TestGateway): Array<Record<string, unknown>> {
  return gw.logs.filter((l) => l['msg'] === 'request' && typeof l['path'] === 'string' && (l['path'] as string).startsWith('/v1/messages'));
}

/** A loopback server that is not the gateway, for a client pointed nowhere useful. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, 'close');
  return port;
}
