// The fake embeddings upstream of bench/embeddings.ts: answers POST
// /v1/embeddings with prebuilt bytes (one answer per input count, built on
// first use), each vector 3,072 float32 values in base64 as OpenAI sends them,
// so the benchmark times the gateway and the wire, not a model or a JSON
// encoder here.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import { serveForBench } from './gateway-server-child.ts';

const BENCH_WIDTH = 3072;

/** One vector's base64: the same for every input (the gateway does not look). */
function vectorBase64(): string {
  const bytes = Buffer.alloc(BENCH_WIDTH * 4);
  for (let j = 0; j < BENCH_WIDTH; j++) bytes.writeFloatLE(Math.fround(Math.sin(j + 1) / 40), j * 4);
  return bytes.toString('base64');
}

const VECTOR = vectorBase64();
const answers = new Map<number, Buffer>();

function answerFor(count: number): Buffer {
  let answer = answers.get(count);
  if (answer === undefined) {
    const data: string[] = [];
    for (let i = 0; i < count; i++) data.push(`{"object":"embedding","index":${i},"embedding":"${VECTOR}"}`);
    answer = Buffer.from(`{"object":"list","data":[${data.join(',')}],"model":"bench-embed","usage":{"prompt_tokens":${count * 256},"total_tokens":${count * 256}}}`);
    answers.set(count, answer);
  }
  return answer;
}

/** The number of inputs in a body the benchmark wrote: its inputs have no quotes inside. */
function inputCount(body: string): number {
  const start = body.indexOf('"input":[') + '"input":['.length;
  const end = body.indexOf(']', start);
  let count = 0;
  for (let i = start; i < end; i++) if (body.charCodeAt(i) === 34) count++;
  return count / 2;
}

/** The model's time per call, as if it computed the vectors (the first argument; default 0). */
const DELAY_MS = Number(process.argv[2] ?? 0);

const server = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    const answer = answerFor(inputCount(Buffer.concat(parts).toString('latin1')));
    const send = (): void => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(answer.length) });
      res.end(answer);
    };
    if (DELAY_MS > 0) setTimeout(send, DELAY_MS);
    else send();
  });
});

if (process.send !== undefined) serveForBench(server, 'bench/embeddings-upstream');
