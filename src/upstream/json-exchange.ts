// One JSON exchange with an upstream beside its chat endpoint (a token count:
// Anthropic's /messages/count_tokens, vLLM's and llama.cpp's /tokenize; a part
// of an embeddings request: /embeddings, its answer as bytes): the same
// exchange as a whole chat answer (./upstream-exchange.ts: the provider's
// transport, its deadlines on its scheduler, the caller's abort, the bounded
// read), POSTed to another endpoint of the same upstream.
import type { Buffer } from 'node:buffer';
import type { ApiError } from '../errors/api-error.ts';
import { endpointUrl, Exchange, type ExchangeSettings } from './upstream-exchange.ts';
import type { ExchangeCall } from './provider.ts';

/** The provider's exchange settings aimed at `resource` under `baseUrl` (checked once, when the provider is built). */
export function settingsFor(settings: ExchangeSettings, baseUrl: string, resource: string): ExchangeSettings {
  return { ...settings, endpoint: endpointUrl(baseUrl, resource) };
}

class JsonExchange extends Exchange<ExchangeCall> {
  async run(body: string, headers: Readonly<Record<string, string>> | undefined): Promise<string> {
    try {
      return await this.readBody(await this.send(body, headers));
    } catch (error) {
      throw this.explain(error);
    } finally {
      this.settle();
    }
  }

  async runForBytes(body: string, tooLarge: ((limit: number) => ApiError) | undefined): Promise<Buffer> {
    try {
      return await this.readBytes(await this.send(body, undefined), tooLarge);
    } catch (error) {
      throw this.explain(error);
    } finally {
      this.settle();
    }
  }
}

/** POSTs `body` to `settings.endpoint` (with `headers` over the provider's
 * own, as a codec's requestHeaders are) and resolves with the whole 2xx
 * answer's text. Throws the ApiError an exchange throws (with its wire cause
 * noted, ./failure-cause.ts), or a ClientAbortError when the caller's signal aborted. */
export function exchangeJson(settings: ExchangeSettings, call: ExchangeCall, body: string, headers?: Readonly<Record<string, string>>): Promise<string> {
  return new JsonExchange(call, settings, false).run(body, headers);
}

/** exchangeJson's answer as bytes, undecoded (the caller knows its text is ASCII or does not need the rest);
 * `tooLarge`: the error for an answer past settings.maxResponseBytes, in the caller's terms. */
export function exchangeJsonBytes(settings: ExchangeSettings, call: ExchangeCall, body: string, tooLarge?: (limit: number) => ApiError): Promise<Buffer> {
  return new JsonExchange(call, settings, false).runForBytes(body, tooLarge);
}
