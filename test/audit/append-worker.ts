// A separate process appending to one data directory's audit log, for the
// multi-process tests:
//   node append-worker.js --data-dir DIR --name NAME [--count N] [--rotate-bytes N] [--pad-bytes N]
// It says "ready" on stdout once loaded and starts appending at the first
// line on its stdin, so that a test starts every appender at the same moment:
// they contend for the lock from the first record, whatever each process took
// to start. It appends COUNT records, or without --count until its stdin
// ends; then it says how many it appended ("appended N").
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { keyCreate } from './audit-fixtures.ts';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    name: { type: 'string' },
    count: { type: 'string' },
    'rotate-bytes': { type: 'string' },
    'pad-bytes': { type: 'string' },
  },
  strict: true,
});
const dataDir = values['data-dir'];
const name = values.name;
if (dataDir === undefined || name === undefined) throw new Error('usage: append-worker --data-dir DIR --name NAME [--count N] [--rotate-bytes N] [--pad-bytes N]');
const count = values.count === undefined ? Infinity : Number(values.count);
const rotateBytes = values['rotate-bytes'];
const log = createFileAuditLog({ dataDir, ...(rotateBytes === undefined ? {} : { rotateBytes: Number(rotateBytes) }) });
// Large records fill a file in a few appends: many rotations in a short run.
const padBytes = values['pad-bytes'];
const detail = padBytes === undefined ? {} : { detail: { note: 'n'.repeat(Number(padBytes)) } };

let stopped = false;
process.stdin.once('end', () => {
  stopped = true;
});
process.stdout.write('ready\n');
await once(process.stdin, 'data');
process.stdin.resume();
let appended = 0;
while (appended < count && !(count === Infinity && stopped)) {
  // One at a time, as a door records: each append waits for the lock against the other process.
  await log.append(keyCreate(appended, { actor: { kind: 'cli', id: name, uid: process.pid }, ...detail }));
  appended += 1;
}
process.stdout.write(`appended ${appended}\n`);
