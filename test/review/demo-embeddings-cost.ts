// Review reproduction (a script, not a test): what one request to the demo
// embeddings alias may cost. The validator admits 2048 inputs with
// dimensions 65536; the demo embedder computes every vector synchronously in
// one map (no yield) and holds them all, then the answer prints them.
// Run: node dist/test/review/demo-embeddings-cost.js
import { embeddingsAnswerPieces } from '../../src/embeddings/embeddings-answer-encode.ts';
import { createDemoEmbedder } from '../../src/providers/demo.ts';

const n = 64;
const width = 65_536;
const embedder = createDemoEmbedder();
const inputs = Array.from({ length: n }, (_, i) => `t${i}`);
let started = performance.now();
const result = await embedder.embed(inputs, width, new AbortController().signal);
const embedMs = performance.now() - started;
started = performance.now();
let chars = 0;
let largestPiece = 0;
for (const piece of embeddingsAnswerPieces(result.vectors, 'float', 'service-embed', 1)) {
  chars += piece.length;
  largestPiece = Math.max(largestPiece, piece.length);
}
const scale = 2048 / n;
console.log(JSON.stringify({
  measured: { inputs: n, width, embedMsBlockingTheLoop: Math.round(embedMs), encodeMs: Math.round(performance.now() - started), answerMB: +(chars / 1e6).toFixed(1), largestPieceKB: Math.round(largestPiece / 1024) },
  at2048Inputs: { embedSecondsBlockingTheLoop: +((embedMs * scale) / 1000).toFixed(1), vectorsHeldMB: (2048 * width * 4) / 1e6, answerGB: +((chars * scale) / 1e9).toFixed(2) },
}));
