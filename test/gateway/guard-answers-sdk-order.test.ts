// The chat answer guard and the openai SDK's stream helper: two tool calls one after the other,
// the second over the 64 KiB a choice's waiting text may reach, get their
// tool_calls.function.arguments.done events in order, once each, with whole arguments, as
// without the scan (a client that runs tools on that event runs each once).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { startGuardRig, type GuardRig } from './guard-rig.ts';

let rig: GuardRig;
let client: OpenAI;
let chunks: unknown[] = [];

function chunk(choices: unknown[]): unknown {
  return { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1700000000, model: 'm', choices };
}
const c = (index: number, delta: Record<string, unknown>, finish: string | null = null) => ({ index, delta, finish_reason: finish });

before(async () => {
  rig = await startGuardRig({
    aliases: { m: { provider: 'fake', model: 'upstream-model-1' }, plain: { provider: 'fake', model: 'upstream-model-1', guard: { detectors: {}, answers: { scan: false, restore: false } } } },
    guard: { detectors: { secrets: 'mask', card_number: 'block' }, answers: { scan: true, restore: true, holdBackChars: 64 } },
  });
  rig.upstream.handle = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const k of chunks) res.write(`data: ${JSON.stringify(k)}\n\n`);
    res.end('data: [DONE]\n\n');
  };
  client = new OpenAI({ baseURL: `${rig.gw.baseUrl}/v1`, apiKey: rig.gw.key, maxRetries: 0, timeout: 20_000 });
});
after(() => rig.close());

const SMALL = '{"city":"Paris","units":"metric"}';
const BIG = `{"path":"notes.txt","body":"${'lorem ipsum dolor sit amet '.repeat(3000)}"}`; // ~81 KB
function upstream(): unknown[] {
  const list = [
    chunk([c(0, { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] })]),
    chunk([c(0, { tool_calls: [{ index: 0, function: { arguments: SMALL } }] })]),
    chunk([c(0, { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'write', arguments: '' } }] })]),
  ];
  for (let i = 0; i < BIG.length; i += 1000) list.push(chunk([c(0, { tool_calls: [{ index: 1, function: { arguments: BIG.slice(i, i + 1000) } }] })]));
  list.push(chunk([c(0, {}, 'tool_calls')]));
  return list;
}

async function doneEvents(model: string): Promise<{ done: string[]; calls: string[] }> {
  chunks = upstream();
  const runner = client.chat.completions.stream({ model, messages: [{ role: 'user', content: 'go' }] });
  const done: string[] = [];
  runner.on('tool_calls.function.arguments.done', (e) => done.push(`${e.index}:${e.name}:${e.arguments.length}`));
  const completion = await runner.finalChatCompletion();
  const calls = (completion.choices[0]?.message.tool_calls ?? []).map((t) => (t.type === 'function' ? `${t.function.name}:${t.function.arguments.length}` : ''));
  return { done, calls };
}

const expected = [`0:weather:${SMALL.length}`, `1:write:${BIG.length}`];

test('without the answer scan: both calls get their done event with whole arguments', async () => {
  assert.deepEqual((await doneEvents('plain')).done, expected);
});

test('under the scan, the second call over 64 KiB: both done events, in order, with whole arguments', async () => {
  const { done, calls } = await doneEvents('m');
  assert.deepEqual(calls, [`weather:${SMALL.length}`, `write:${BIG.length}`], 'assembled');
  assert.deepEqual(done, expected);
});
