// What the egress guard costs a streamed answer: an answer of code, logs and
// prose (a planted AWS key id about every 2 kB) pushed through one answer
// channel in pieces of a model's token size (4 characters) and of larger
// network reads (64 and 512), against the same text guarded whole, with every
// detector on (mask) and the default hold-back. Figures: MB/s of answer text
// and the CPU per 4 kB answer, side by side in one run, best of 5.
//
//   npm run build && node dist/bench/guard-answers.js
import { createAnswerGuard, PlaceholderBook } from '../src/guard/answer-guard.ts';
import { ANSWERS_OFF, effectiveGuardPolicy } from '../src/guard/guard-policy.ts';
import { createGuardScanner, DETECTOR_NAMES } from '../src/guard/guard-types.ts';

const LINES = [
  'export async function loadUser(id: string): Promise<User> { const row = await db.query("select * from users where id = $1", [id]); return row; }',
  '2026-11-28T10:12:33.101Z INFO request id=9fceb02d0ae598e9 path=/v1/chat/completions status=200 ms=412 user=7c1e2b4a-0d2f-4c1e-9a0b-5e6f7a8b9c0d',
  'The customer asked whether the invoice from Tuesday was paid, and whether the gateway forwards each request to the model in order.',
  'Here is the configuration you asked for; the region stays eu-west-1 and the bucket keeps its S3 lifecycle rule for 30 days.',
];
const PLANT = 'AWS_ACCESS_KEY_ID=AKIAQ3EGRTWXZ7PLMN4K';
const TEXT_CHARS = 1024 * 1024;
const ANSWER_CHARS = 4096;

function answerText(chars: number): string {
  let text = '';
  for (let i = 0; text.length < chars; i++) {
    text += `${LINES[i % LINES.length] as string}\n`;
    if (i % 14 === 13) text += `${PLANT}\n`;
  }
  return text.slice(0, chars);
}

const scanner = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: [] });
const policy = effectiveGuardPolicy({ detectors: { secrets: 'mask', personal: 'mask' }, patterns: [] }, null, null);
const settings = { ...ANSWERS_OFF, scan: true, restore: true };
const text = answerText(TEXT_CHARS);

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
