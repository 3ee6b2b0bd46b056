// What the egress guard adds to one chat request's own work, at 1 kB, 32 kB
// and 1 MB of prompt (code, logs and prose, a planted secret about every 4
// kB): the request's parse (the streaming parser with the chat observer) and
// validation, against the same plus the guard over the parsed body with every
// detector on (mask), side by side in one run. The request's whole CPU in the
// gateway (HTTP, auth, routing, logging, the upstream exchange) is larger
// than parse and validation, so the ratio here overstates the guard's share.
//
//   npm run build && node dist/bench/guard-request.js
import { Buffer } from 'node:buffer';
import { createChatRequestObserver, validateChatRequest } from '../src/chat/request-validator.ts';
import { guardBody } from '../src/guard/body-guard.ts';
import { effectiveGuardPolicy } from '../src/guard/guard-policy.ts';
import { createGuardScanner, DETECTOR_NAMES } from '../src/guard/guard-types.ts';
import { parseJson } from '../src/json/parser.ts';
import { guardPrompt } from './guard-prompts.ts';
import { perCall } from './per-call.ts';

const scanner = createGuardScanner({ detectors: new Set(DETECTOR_NAMES), patterns: [] });
const policy = effectiveGuardPolicy({ detectors: { secrets: 'mask', personal: 'mask' }, patterns: [] }, null, null);
const parse = (bytes: Buffer): unknown => parseJson(bytes, { observer: createChatRequestObserver(), rejectDuplicateKeys: true, limits: { maxStringBytes: 4 * 1024 * 1024 } });

console.log('| prompt | parse + validate µs | + guard µs | guard alone µs | added | guard MB/s |');
console.log('|---|---|---|---|---|---|');
for (const [label, size, n] of [['1 kB', 1024, 4000], ['32 kB', 32 * 1024, 300], ['1 MB', 1024 * 1024, 10]] as const) {
  const body = Buffer.from(JSON.stringify({ model: 'service-chat', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: guardPrompt(size) }] }));
  const parsed = parse(body);
  const base = perCall(() => validateChatRequest(parse(body)), n);
  const guarded = perCall(() => {
    const value = parse(body);
    validateChatRequest(value);
    return guardBody(value, scanner, policy);
  }, n);
  const alone = perCall(() => guardBody(parsed, scanner, policy), n);
  console.log(`| ${label} | ${(base / 1000).toFixed(1)} | ${(guarded / 1000).toFixed(1)} | ${(alone / 1000).toFixed(1)} | ${(((guarded - base) / base) * 100).toFixed(0)} % | ${(size / 1e6 / (alone / 1e9)).toFixed(0)} |`);
}
