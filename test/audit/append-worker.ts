// A separate process appending to one data directory's audit log, for the
// two-process test: node append-worker.js DATA_DIR COUNT NAME.
import { createFileAuditLog } from '../../src/audit/file-audit-log.ts';
import { keyCreate } from './audit-fixtures.ts';

const [dataDir, count, name] = process.argv.slice(2);
if (dataDir === undefined || count === undefined || name === undefined) throw new Error('usage: append-worker DATA_DIR COUNT NAME');
const log = createFileAuditLog({ dataDir });
for (let i = 0; i < Number(count); i++) {
  // One at a time, as a door records: each append waits for the lock against the other process.
  await log.append(keyCreate(i, { actor: { kind: 'cli', id: name, uid: process.pid } }));
}
