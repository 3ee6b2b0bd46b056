// A fake Azure OpenAI for the gateway tests, answering the way Azure does:
// the classic path /openai/deployments/{deployment}/chat/completions needs
// ?api-version= and the `api-key` header (404 and 401 otherwise), the v1 path
// /openai/v1/chat/completions takes the deployment as the body's model and
// also accepts the key as a Bearer; answers carry Azure's content-filter
// fields, and streams open with a frame that has no choices
// (prompt_filter_results), an empty id and model and `created: 0`. What it
// finds wrong beyond that (the key sent twice, a key in the query) goes to
// `violations`, for the test to assert empty.
import type { ServerResponse } from 'node:http';
import type { UpstreamRequest } from './harness.ts';

export const AZURE_KEY = 'azure-key-0123456789abcdef';
export const API_VERSION = '2024-10-21';
export const DEPLOYMENT = 'gpt-4o-prod';
/** The deployments the fake resource has: the tests' own and those of the documented examples. */
const DEPLOYMENTS = new Set([DEPLOYMENT, 'gpt-4o', 'gpt-4o-mini']);
/** What Azure reports as `model`: the deployed model, not the deployment's name. */
const AZURE_MODEL = 'gpt-4o-2024-08-06';

/** What the fake found wrong with a request, beyond what it answers with an error. */
export const violations: string[] = [];

const filters = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Azure's routing and authentication, in the order Azure checks them. */
export function azure(req: UpstreamRequest, res: ServerResponse): void {
  const url = new URL(req.url, 'http://azure.invalid');
  if (req.headers['authorization'] !== undefined && req.headers['api-key'] !== undefined) violations.push('the key was sent twice: api-key and Authorization');
  if (url.search.includes('key')) violations.push(`a key in the query: ${url.search}`);
  const classic = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(url.pathname);
  const v1 = url.pathname === '/openai/v1/chat/completions';
  if (req.method !== 'POST' || (classic === null && !v1)) return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
  if (classic !== null && url.searchParams.get('api-version') !== API_VERSION) return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
  if (v1 && ![null, 'preview'].includes(url.searchParams.get('api-version'))) return json(res, 400, { error: { code: 'BadRequest', message: 'API version not supported' } });
  const bearer = v1 && req.headers['authorization'] === `Bearer ${AZURE_KEY}`;
  if (req.headers['api-key'] !== AZURE_KEY && !bearer) {
    return json(res, 401, { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.' } });
  }
  const body = req.body as { model?: string; stream?: boolean };
  const deployment = classic !== null ? decodeURIComponent(classic[1] as string) : body.model;
  if (deployment === undefined || !DEPLOYMENTS.has(deployment)) return json(res, 404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } });
  if (body.stream === true) return azureStream(res);
  json(res, 200, {
    id: 'chatcmpl-AZ1',
    object: 'chat.completion',
    created: 1_730_000_000,
    model: AZURE_MODEL,
    system_fingerprint: 'fp_azure',
    prompt_filter_results: [{ prompt_index: 0, content_filter_results: filters }],
    choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'Hello from Azure.', refusal: null }, content_filter_results: filters }],
    usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 },
  });
}

function azureStream(res: ServerResponse): void {
  const frame = (choices: unknown[], extra: Record<string, unknown> = {}): unknown => ({ id: 'chatcmpl-AZ2', object: 'chat.completion.chunk', created: 1_730_000_001, model: AZURE_MODEL, system_fingerprint: 'fp_azure', choices, ...extra });
  const frames = [
    // Azure's first frame: the prompt's filter results, no choices, empty id and model.
    { choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: filters }] },
    frame([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, finish_reason: null, logprobs: null, content_filter_results: {} }]),
    frame([{ index: 0, delta: { content: 'Hello' }, finish_reason: null, logprobs: null, content_filter_results: filters }]),
    frame([{ index: 0, delta: { content: ' from Azure.' }, finish_reason: null, logprobs: null, content_filter_results: filters }]),
    frame([{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null, content_filter_results: {} }]),
    frame([], { usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 } }),
  ];
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  for (const f of frames) res.write(`data: ${JSON.stringify(f)}\n\n`);
  res.end('data: [DONE]\n\n');
}
