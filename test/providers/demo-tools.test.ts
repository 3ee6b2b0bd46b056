// The demo provider calls an offered tool when the user's words plainly ask
// for what it does, with arguments taken from those words; and the embedded
// default lets service-auto be seen choosing by image.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatRequest, ToolDefinition } from '../../src/chat/types.ts';
import { loadConfig } from '../../src/config/config-loader.ts';
import { chooseTool, demoArguments, placeholderArguments, planDemoReply } from '../../src/providers/demo-reply.ts';
import { resolveAlias } from '../../src/routing/alias-routing.ts';

const weather: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the current weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['city', 'unit'],
    },
  },
};
const searchDocs: ToolDefinition = {
  type: 'function',
  function: {
    name: 'searchDocs',
    description: 'Search the product documentation',
    parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } }, required: ['query'] },
  },
};
const sendEmail: ToolDefinition = {
  type: 'function',
  function: { name: 'send_email', description: 'Send an email message', parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] } },
};

function ask(text: string, tools: ToolDefinition[], extra: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'service-chat', messages: [{ role: 'user', content: text }], tools, ...extra };
}

function toolCall(request: ChatRequest): { name: string; args: unknown } | 'text' {
  const reply = planDemoReply(request);
  return reply.kind === 'tool_call' ? { name: reply.toolName, args: JSON.parse(reply.pieces.join('')) } : 'text';
}

test('a question about what a tool does calls it, with the place taken from the words', () => {
  assert.deepEqual(toolCall(ask('What is the weather in Paris?', [searchDocs, weather])), { name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } });
  assert.deepEqual(toolCall(ask("How's the weather looking in New York today?", [weather])), { name: 'get_weather', args: { city: 'New York', unit: 'celsius' } });
  // No place named: the placeholder stays.
  assert.deepEqual(toolCall(ask('Weather please', [weather])), { name: 'get_weather', args: { city: 'demo', unit: 'celsius' } });
});

test('the tool sharing the most words wins (name words count double); a query property gets the user text', () => {
  assert.deepEqual(toolCall(ask('Search the documentation for rate limits', [weather, searchDocs, sendEmail])), {
    name: 'searchDocs',
    args: { query: 'Search the documentation for rate limits' },
  });
  assert.deepEqual(toolCall(ask('Please email Bob about it', [searchDocs, sendEmail])), { name: 'send_email', args: { to: 'demo' } });
});

test('words that say nothing about a tool do not call it', () => {
  for (const text of ['Tell me a joke', 'What is the capital of France?', 'Get me the list for today']) {
    assert.equal(toolCall(ask(text, [weather, searchDocs, sendEmail])), 'text', text);
  }
});

test('the rules that were there stay: a named tool, "required", "none", after a tool result, trigger words', () => {
  assert.equal(chooseTool(ask('use send_email now', [weather, sendEmail]))?.function.name, 'send_email');
  assert.equal(chooseTool(ask('Tell me a joke', [weather, sendEmail], { tool_choice: 'required' }))?.function.name, 'get_weather');
  assert.equal(chooseTool(ask('What is the weather in Paris?', [weather], { tool_choice: 'none' })), undefined);
  assert.equal(chooseTool(ask('call something', [sendEmail, weather]))?.function.name, 'send_email');
  const afterTool: ChatRequest = {
    model: 'service-chat',
    tools: [weather],
    messages: [
      { role: 'user', content: 'What is the weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'Sunny' },
    ],
  };
  assert.equal(chooseTool(afterTool), undefined);
});

test('demoArguments: place and query properties by name, typed placeholders otherwise; never a non-string property', () => {
  const schema = {
    type: 'object',
    properties: { location: { type: 'string' }, q: { type: 'string' }, count: { type: 'integer' }, destination: { type: 'integer' } },
    required: ['location', 'q', 'count', 'destination'],
  };
  assert.deepEqual(demoArguments(schema, 'Find hotels near Lisbon'), { location: 'Lisbon', q: 'Find hotels near Lisbon', count: 1, destination: 1 });
  assert.deepEqual(demoArguments(schema, ''), { location: 'demo', q: 'demo', count: 1, destination: 1 });
});

test('the embedded default: an image request to service-auto goes to service-vision, reason image_url; text to service-chat', () => {
  const config = loadConfig({ env: {}, cwd: '/' });
  const image: ChatRequest = {
    model: 'service-auto',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
  };
  const routed = resolveAlias(image, config, () => true);
  assert.equal(routed.alias, 'service-vision');
  assert.equal(routed.reason, 'image_url');
  const text = resolveAlias({ model: 'service-auto', messages: [{ role: 'user', content: 'Hi' }] }, config, () => true);
  assert.equal(text.alias, 'service-chat');
  const reply = planDemoReply(image);
  assert.deepEqual(reply.kind === 'text' ? reply.pieces.join('') : reply.kind, 'Portcullis demo provider (not a language model). You said: "What is in this picture?" and sent 1 image. The request had 1 message.');
});

test('a tool name counts only as a word of its own; a place after a capitalised preposition counts too', () => {
  const run: ToolDefinition = { type: 'function', function: { name: 'run', parameters: { type: 'object', properties: {} } } };
  assert.equal(toolCall(ask('What should I eat for brunch?', [run])), 'text');
  assert.equal(toolCall(ask('please run it', [run])) === 'text', false);
  assert.deepEqual(toolCall(ask('In Paris, what is the weather?', [weather])), { name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } });
});

test('placeholderArguments: a required name listed many times is built once (the work stays linear in the schema)', () => {
  const reads = { count: 0 };
  const listed = (name: string): string[] =>
    new Proxy(Array<string>(100).fill(name), {
      get(target, key, receiver) {
        reads.count++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
  const c = { type: 'object', properties: { d: { type: 'string' } }, required: listed('d') };
  const b = { type: 'object', properties: { c }, required: listed('c') };
  const parameters = { type: 'object', properties: { b, ['__proto__']: { type: 'integer' } }, required: [...listed('b'), '__proto__'] };
  const args = placeholderArguments(parameters);
  // 100 names at each of three levels: a few hundred reads, not 100 x 100 x 100.
  assert.ok(reads.count < 2_000, `${reads.count} reads`);
  assert.deepEqual(JSON.stringify(args), '{"b":{"c":{"d":"demo"}},"__proto__":1}');
});
