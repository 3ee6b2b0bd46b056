// The embeddings codecs on the answer size the issue names: 2,048 vectors of
// 3,072 dimensions (33.5 MB as base64). Each row is one whole answer, timed
// as the gateway runs it: an upstream's text decoded into vectors
// (decodeEmbeddingsAnswer), or vectors written as the client's answer
// (embeddingsAnswerPieces; each piece measured as UTF-8, as a socket write
// would encode it). MB/s is over the text decoded or written.
//
//   npm run bench:embeddings-codec
//
// Env: BENCH_ROUNDS (default 5; the best round is shown), BENCH_VECTORS, BENCH_WIDTH.

import { Buffer } from 'node:buffer';
import { decodeEmbeddingsAnswer, encodeBase64Vector } from '../src/embeddings/embeddings-answer-decode.ts';
import { embeddingsAnswerPieces } from '../src/embeddings/embeddings-answer-encode.ts';
import type { Vector } from '../src/embeddings/embeddings-types.ts';
import { demoEmbedding } from '../src/providers/demo-embeddings.ts';

const rounds = Number(process.env['BENCH_ROUNDS'] ?? 5);
const count = Number(process.env['BENCH_VECTORS'] ?? 2048);
const width = Number(process.env['BENCH_WIDTH'] ?? 3072);

const floats: Float32Array[] = Array.from({ length: count }, (_, i) => demoEmbedding(`input ${i}`, width));
const doubles: Float64Array[] = floats.map((v) => Float64Array.from(v));

function upstreamAnswer(encoding: 'float' | 'base64'): string {
  const data = floats.map((v, index) => `{"object":"embedding","index":${index},"embedding":${encoding === 'base64' ? `"${encodeBase64Vector(v)}"` : `[${v.join(',')}]`}}`);
  return `{"object":"list","data":[${data.join(',')}],"model":"m","usage":{"prompt_tokens":${count},"total_tokens":${count}}}`;
}

/** Best of `rounds`: milliseconds and the bytes handled. */
function best(run: () => number): { ms: number; bytes: number } {
  let ms = Number.POSITIVE_INFINITY;
  let bytes = 0;
  for (let r = 0; r < rounds; r++) {
    const started = process.hrtime.bigint();
    bytes = run();
    ms = Math.min(ms, Number(process.hrtime.bigint() - started) / 1e6);
  }
  return { ms, bytes };
}

function written(vectors: readonly Vector[], encoding: 'float' | 'base64'): number {
  let bytes = 0;
  for (const piece of embeddingsAnswerPieces(vectors, encoding, 'text-embed', count)) bytes += Buffer.byteLength(piece, 'utf8');
  return bytes;
}

const base64Text = upstreamAnswer('base64');
const floatText = upstreamAnswer('float');
const base64Bytes = Buffer.from(base64Text, 'latin1');
const checked = decodeEmbeddingsAnswer(base64Bytes, count, width).vectors;
const rows: Array<[string, () => number]> = [
  ['base64 decode (answer bytes -> checked base64)', () => (decodeEmbeddingsAnswer(base64Bytes, count, width), base64Bytes.length)],
  ['float decode (answer text -> doubles)', () => (decodeEmbeddingsAnswer(floatText, count, width), floatText.length)],
  ['base64 -> base64 (checked -> answer pieces)', () => written(checked, 'base64')],
  ['float32 -> base64 (a local provider)', () => written(floats, 'base64')],
  ['float -> base64 (doubles -> answer pieces)', () => written(doubles, 'base64')],
  ['base64 -> float (checked -> answer pieces)', () => written(checked, 'float')],
];

console.log(`embeddings codecs: ${count} x ${width} answer, best of ${rounds} rounds (node ${process.versions.node})`);
console.log(`  ${'step'.padEnd(48)} ${'MB'.padStart(7)} ${'ms'.padStart(8)} ${'MB/s'.padStart(8)}`);
for (const [name, run] of rows) {
  const { ms, bytes } = best(run);
  const mb = bytes / 1e6;
  console.log(`  ${name.padEnd(48)} ${mb.toFixed(1).padStart(7)} ${ms.toFixed(1).padStart(8)} ${(mb / (ms / 1000)).toFixed(0).padStart(8)}`);
}
