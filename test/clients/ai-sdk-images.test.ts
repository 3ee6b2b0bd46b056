// The Vercel AI SDK's image handling against the real gateway with a fake
// upstream (alias service-fake) that records what arrives. By default the SDK
// downloads an image URL and sends its bytes as a data: URL, which the gateway
// refuses (spec rule 5); with `supportedUrls` declaring https image URLs the
// URL goes through untouched. Image downloads stay on loopback: a server of
// our own serves the picture, and the SDK's own downloader refuses loopback.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, type Experimental_DownloadFunction as DownloadFunction, type ModelMessage } from 'ai';
import { startFakeUpstream, startGateway, type FakeUpstream, type TestGateway } from '../gateway/harness.ts';
import { loadSnippet, type SnippetTarget } from './client-snippets.ts';

const TEST_TIMEOUT = { timeout: 20_000 };
const CALL = { maxRetries: 0, timeout: 10_000 } as const;
/** A 1x1 PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');
const PIXEL_DATA_URL = `data:image/png;base64,${PIXEL.toString('base64')}`;

let upstream: FakeUpstream;
let gw: TestGateway;
let target: SnippetTarget;
let images: http.Server;
let imageUrl: string;
let imageRequests = 0;

before(async () => {
  upstream = await startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-vision-1',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'upstream-model-1',
        choices: [{ index: 0, message: { role: 'assistant', content: 'A cat on a mat.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 90, completion_tokens: 5, total_tokens: 95 },
      }),
    );
  });
  gw = await startGateway({ upstreamBaseUrl: upstream.baseUrl });
  target = { baseURL: `${gw.baseUrl}/v1`, apiKey: gw.key };
  images = http.createServer((_req, res) => {
    imageRequests++;
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': PIXEL.length });
    res.end(PIXEL);
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/pixel.png`;
});

after(async () => {
  await gw.close();
  await upstream.close();
  await new Promise<void>((resolve) => images.close(() => resolve()));
});

function imagePrompt(image: URL | Uint8Array): ModelMessage[] {
  return [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image', image }] }];
}

/** Stands in for the SDK's downloader, which refuses loopback addresses. */
const loopbackDownload: DownloadFunction = (requested) =>
  Promise.all(
    requested.map(async ({ url }) => {
      const res = await fetch(url);
      return { data: new Uint8Array(await res.arrayBuffer()), mediaType: res.headers.get('content-type') ?? undefined };
    }),
  );

const DATA_URL_REFUSED = {
  error: {
    message: "Invalid value for 'messages[0].content[1].image_url.url': data: URLs are not accepted; pass the image as an https:// URL.",
    type: 'invalid_request_error',
    param: 'messages[0].content[1].image_url.url',
    code: 'invalid_value',
  },
};

test('ai-sdk-images.mjs: with supportedUrls the https URL reaches the upstream as sent', TEST_TIMEOUT, async () => {
  const before = upstream.requests.length;
  const run = await loadSnippet('ai-sdk-images.mjs');
  assert.deepEqual(await run({ ...target, model: 'service-fake' }), { model: 'service-fake', text: 'A cat on a mat.' });
  assert.equal(upstream.requests.length, before + 1);
  const body = upstream.requests.at(-1)?.body as { model: string; messages: unknown };
  assert.equal(body.model, 'upstream-model-1');
  assert.deepEqual(body.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      ],
    },
  ]);
});

test('without supportedUrls the SDK downloads the image and sends a data: URL: 400 invalid_value at its path', TEST_TIMEOUT, async () => {
  const before = { images: imageRequests, upstream: upstream.requests.length };
  const portcullis = createOpenAICompatible({ name: 'portcullis', baseURL: target.baseURL, apiKey: target.apiKey });
  await assert.rejects(
    generateText({ model: portcullis('service-fake'), messages: imagePrompt(new URL(imageUrl)), experimental_download: loopbackDownload, ...CALL }),
    (err: unknown) => {
      assert.ok(APICallError.isInstance(err));
      assert.equal(err.statusCode, 400);
      assert.deepEqual(JSON.parse(err.responseBody ?? ''), DATA_URL_REFUSED);
      const sent = err.requestBodyValues as { messages: Array<{ content: Array<{ image_url?: { url: string } }> }> };
      assert.equal(sent.messages[0]?.content[1]?.image_url?.url, PIXEL_DATA_URL);
      return true;
    },
  );
  assert.equal(imageRequests, before.images + 1);
  assert.equal(upstream.requests.length, before.upstream);
});

test('without supportedUrls the SDK own downloader refuses a loopback image URL before calling the gateway', TEST_TIMEOUT, async () => {
  const before = { images: imageRequests, upstream: upstream.requests.length };
  const { fetch: noFetch, calls } = countingFetch();
  const portcullis = createOpenAICompatible({ name: 'portcullis', baseURL: target.baseURL, apiKey: target.apiKey, fetch: noFetch });
  await assert.rejects(generateText({ model: portcullis('service-fake'), messages: imagePrompt(new URL(imageUrl)), ...CALL }), (err: unknown) => {
    assert.equal((err as Error).name, 'AI_DownloadError');
    assert.equal((err as Error).message, 'URL with IP address 127.0.0.1 is not allowed');
    return true;
  });
  assert.equal(calls(), 0);
  assert.equal(imageRequests, before.images);
  assert.equal(upstream.requests.length, before.upstream);
});

test('image bytes are always sent as a data: URL, supportedUrls or not: 400', TEST_TIMEOUT, async () => {
  const portcullis = createOpenAICompatible({
    name: 'portcullis',
    baseURL: target.baseURL,
    apiKey: target.apiKey,
    supportedUrls: () => ({ 'image/*': [/^https:\/\//] }),
  });
  await assert.rejects(generateText({ model: portcullis('service-fake'), messages: imagePrompt(new Uint8Array(PIXEL)), ...CALL }), (err: unknown) => {
    assert.ok(APICallError.isInstance(err));
    assert.deepEqual(JSON.parse(err.responseBody ?? ''), DATA_URL_REFUSED);
    return true;
  });
});

test('supportedUrls for https only: an http:// image URL is still downloaded, and refused as a data: URL', TEST_TIMEOUT, async () => {
  const before = imageRequests;
  const portcullis = createOpenAICompatible({
    name: 'portcullis',
    baseURL: target.baseURL,
    apiKey: target.apiKey,
    supportedUrls: () => ({ 'image/*': [/^https:\/\//] }),
  });
  await assert.rejects(
    generateText({ model: portcullis('service-fake'), messages: imagePrompt(new URL(imageUrl)), experimental_download: loopbackDownload, ...CALL }),
    (err: unknown) => {
      assert.ok(APICallError.isInstance(err));
      assert.deepEqual(JSON.parse(err.responseBody ?? ''), DATA_URL_REFUSED);
      return true;
    },
  );
  assert.equal(imageRequests, before + 1);
});

function countingFetch(): { fetch: typeof fetch; calls(): number } {
  let count = 0;
  return {
    fetch: (input, init) => {
      count++;
      return fetch(input, init);
    },
    calls: () => count,
  };
}
