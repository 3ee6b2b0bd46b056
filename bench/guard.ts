// Throughput of the guard's scanner with every detector on, over a generated
// corpus of realistic prompt text: source code, log lines, prose and JSON, with
// a planted secret or personal value about every 4 kB. Reports MB/s per kind
// and over the mix, and the findings (so a scanner that finds nothing is seen).
//
//   npm run bench:guard
//
// Also 4 MB of grouped digits ("1234 5678 ..."), the worst case of re-reading
// numbers, which must scan about as fast as prose.
//
// Env: BENCH_MB (default 8: corpus size), BENCH_ROUNDS (default 5; the best round is reported).

import { compileCustomPattern, createGuardScanner, DETECTOR_NAMES, type Finding } from '../src/guard/guard-types.ts';
import { createRandom } from './random.ts';

const random = createRandom(0x9e3779b9);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
const hex = (n: number): string => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');
const int = (n: number): number => Math.floor(random() * n);

const CODE = [
  () => `export async function ${pick(['loadUser', 'fetchOrders', 'parseConfig', 'renderPage'])}(id: string, options: Options = {}): Promise<Result> {`,
  () => `  const ${pick(['token', 'secret', 'password', 'apiKey'])} = await vault.read(\`${pick(['db', 'api', 'cache'])}/\${id}\`);`,
  () => `  if (response.status === ${pick([200, 401, 404, 500])}) throw new HttpError(response.status, await response.text());`,
  () => `  for (let i = 0; i < items.length; i++) total += items[i].price * ${int(100)};`,
  () => `import { ${pick(['S3Client', 'EKSClient', 'DynamoDB'])} } from "@aws-sdk/client-${pick(['s3', 'eks', 'dynamodb'])}";`,
  () => `    return { id: "${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}", createdAt: ${1_700_000_000 + int(1e7)} };`,
  () => '}',
];
const LOGS = [
  () => `2024-${String(1 + int(12)).padStart(2, '0')}-${String(1 + int(28)).padStart(2, '0')}T10:${int(60)}:${int(60)}.${int(1000)}Z INFO request id=${hex(16)} path=/v1/chat/completions status=200 ms=${int(900)}`,
  () => `[${pick(['WARN', 'ERROR', 'DEBUG'])}] commit ${hex(40)} deployed to eks-prod-${int(9)} from 10.${int(255)}.${int(255)}.${int(255)}`,
  () => `GET /assets/app.${hex(20)}.js HTTP/1.1 304 - "Mozilla/5.0 Chrome/120.0.${int(9999)}.${int(200)}"`,
];
const WORDS = ['the', 'gateway', 'forwards', 'each', 'request', 'to', 'a', 'model', 'and', 'returns', 'its', 'answer', 'customer', 'invoice', 'was', 'paid', 'on', 'Tuesday', 'please', 'summarise'];
const PROSE = [() => `${Array.from({ length: 12 + int(30) }, () => pick(WORDS)).join(' ')}.`];
const JSONS = [
  () => JSON.stringify({ role: pick(['user', 'assistant', 'tool']), content: Array.from({ length: 10 + int(20) }, () => pick(WORDS)).join(' '), tool_call_id: `call_${hex(24)}` }),
  () => JSON.stringify({ id: int(1e10), sha: hex(40), created: 1_700_000_000 + int(1e7), tags: ['s3', 'eks'], price: int(10000) / 100 }),
];
const PLANTS = [
  'AKIAIOSFODNN7EXAMPLE', 'card 4111 1111 1111 1111', 'mail jane.doe@example.org', 'IBAN DE89 3704 0044 0532 0130 00',
  'phone: +44 20 7946 0958', 'SSN 536-22-1234', 'password = "Xq9$vT2!pLm7"', 'sk-proj-Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1',
];

function corpus(kind: ReadonlyArray<() => string>, bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  let sincePlant = 0;
  while (size < bytes) {
    let line = pick(kind)();
    if (sincePlant > 4096) {
      line += ` ${pick(PLANTS)}`;
      sincePlant = 0;
    }
    parts.push(line);
    size += line.length + 1;
    sincePlant += line.length + 1;
  }
  return parts.join('\n');
}

const mb = Number(process.env.BENCH_MB ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const bytes = mb * 1024 * 1024;
const patterns = [compileCustomPattern({ name: 'ticket', regex: 'INC-[0-9]{6}' }), compileCustomPattern({ name: 'project', literals: ['Project X', 'Bluebird'] })];
const compiled = patterns.flatMap((p) => ('problem' in p ? [] : [p]));
const scanners = {
  'all detectors': createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: [] }),
  'all detectors + 2 operator patterns': createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: compiled }),
};
const kinds: Record<string, string> = {
  code: corpus(CODE, bytes / 4),
  logs: corpus(LOGS, bytes / 4),
  prose: corpus(PROSE, bytes / 4),
  json: corpus(JSONS, bytes / 4),
};
kinds.mix = Object.values(kinds).join('\n');
// Not in the mix: 4 MB of digit groups, each a word start that reads as the start of a card or phone number.
kinds['digit groups'] = '1234 5678 9012 3456 '.repeat(bytes / 2 / 20);

/** Scans a text as the gateway would: in 4 kB strings (message contents). */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

console.log(`guard scanner, node ${process.version}, corpus ${mb} MB (best of ${rounds} rounds)`);
/** The machine's floor: one charCodeAt per character and nothing else, to read the figures against on a loaded machine. */
function bareLoop(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 0x40) n++;
  return n;
}

console.log('| scanner | text | MB/s (whole) | MB/s (4 kB strings) | findings | bare loop MB/s |');
console.log('|---|---|---|---|---|---|');
for (const [scannerName, scanner] of Object.entries(scanners)) {
  for (const [kind, text] of Object.entries(kinds)) {
    const chunks = pieces(text, 4096);
    let whole = Infinity;
    let split = Infinity;
    let findings = 0;
    let bare = Infinity;
    for (let round = 0; round < rounds; round++) {
      const out: Finding[] = [];
      let started = process.hrtime.bigint();
      bareLoop(text);
      bare = Math.min(bare, Number(process.hrtime.bigint() - started) / 1e9);
      started = process.hrtime.bigint();
      scanner.scan(text, out);
      whole = Math.min(whole, Number(process.hrtime.bigint() - started) / 1e9);
      findings = out.length;
      started = process.hrtime.bigint();
      const outs: Finding[] = [];
      for (const chunk of chunks) scanner.scan(chunk, outs);
      split = Math.min(split, Number(process.hrtime.bigint() - started) / 1e9);
    }
    const size = Buffer.byteLength(text) / (1024 * 1024);
    console.log(`| ${scannerName} | ${kind} | ${(size / whole).toFixed(1)} | ${(size / split).toFixed(1)} | ${findings} | ${(size / bare).toFixed(0)} |`);
  }
}
