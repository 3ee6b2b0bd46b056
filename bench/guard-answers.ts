// What the egress guard costs a streamed answer: an answer of code, logs,
// prose and JSON (a planted AWS key id about every 2 kB) pushed through one answer
// channel in pieces of a model's token size (4 characters) and of larger
// network reads (64 and 512), against the same text guarded whole, with every
// detector on (mask) and the default hold-back. Figures: MB/s of answer text
// and the CPU per 4 kB answer, side by side in one run, best of 5.
//
//   npm run build && node dist/bench/guard-answers.js
import { createAnswerGuard, PlaceholderBook } from '../src/guard/answer-guard.ts';
import { ANSWERS_OFF, effectiveGuardPolicy } from '../src/guard/guard-policy.ts';
import { createGuardScanner, DETECTOR_NAMES } from '../src/guard/guard-types.ts';
import { guardPrompt } from './guard-prompts.ts';

const TEXT_CHARS = 1024 * 1024;
const ANSWER_CHARS = 4096;

const scanner = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: [] });
const policy = effectiveGuardPolicy({ detectors: { secrets: 'mask', personal: 'mask' }, patterns: [] }, null, null);
const settings = { ...ANSWERS_OFF, scan: true, restore: true };
const text = guardPrompt(TEXT_CHARS, 14);

function streamed(piece: number): number {
  const guard = createAnswerGuard({ scanner, policy, settings, book: new PlaceholderBook() });
  const channel = guard.channel('answer.choices[0].delta.content', 'text');
  let out = 0;
  for (let i = 0; i < text.length; i += piece) out += channel.push(text.slice(i, i + piece)).length;
  return out + channel.end().length;
}

function whole(): number {
  const guard = createAnswerGuard({ scanner, policy, settings, book: new PlaceholderBook() });
  return guard.whole('answer.choices[0].message.content', 'text', text).text.length;
}

function best(run: () => number): number {
  let fastest = Infinity;
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    run();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

const rows: [string, () => number][] = [
  ['whole text', whole],
  ['pushes of 512', () => streamed(512)],
  ['pushes of 64', () => streamed(64)],
  ['pushes of 4 (a token)', () => streamed(4)],
];
console.log(`| answer text (1 MiB, hold-back ${settings.holdBackChars}) | MB/s | ms per 4 kB answer |`);
console.log('|---|---|---|');
for (const [label, run] of rows) {
  const ms = best(run);
  console.log(`| ${label} | ${(TEXT_CHARS / 1e6 / (ms / 1000)).toFixed(1)} | ${((ms * ANSWER_CHARS) / TEXT_CHARS).toFixed(3)} |`);
}
