// A separate process appending to one data directory's audit log, for the
// two-process tests: node append-worker.js DATA_DIR COUNT NAME [ROTATE_BYTES].
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { keyCreate } from './audit-fixtures.ts';

const [dataDir, count, name, rotateBytes] = process.argv.slice(2);
if (dataDir === undefined || count === undefined || name === undefined) throw new Error('usage: append-worker DATA_DIR COUNT NAME');
const log = createFileAuditLog({ dataDir, ...(rotateBytes === undefined ? {} : { rotateBytes: Number(rotateBytes) }) });
for (let i = 0; i < Number(count); i++) {
  // One at a time, as a door records: each append waits for the lock against the other process.
  await log.append(keyCreate(i, { actor: { kind: 'cli', id: name, uid: process.pid } }));
}
