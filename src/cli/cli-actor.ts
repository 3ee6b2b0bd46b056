// Who a `portcullis` command acts as, for the audit trail: the OS user the
// process runs as (name and uid, from the operating system), and, when it was
// started with sudo, the user who ran sudo (from sudo's SUDO_USER and
// SUDO_UID). The OS user is what the system vouches for; the sudo user is what
// sudo put in the environment, so it is kept as a readable name and in the
// detail, never as the id.
import os from 'node:os';
import type { AuditWho } from '../state/audited-key-store.ts';

/** Environment values taken into a record are cut to this length. */
const MAX_NAME_LENGTH = 256;

function userOfProcess(): { name: string; uid: number | null } {
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  try {
    const info = os.userInfo();
    // Windows has no uid: userInfo says -1.
    return { name: info.username, uid: info.uid === -1 ? null : info.uid };
  } catch {
    // A uid with no passwd entry (a container run as an arbitrary uid).
    return { name: uid === null ? 'unknown' : `uid:${uid}`, uid };
  }
}

/** The audit actor, source and detail of a command run with environment `env`. */
export function cliWho(env: NodeJS.ProcessEnv): AuditWho {
  const user = userOfProcess();
  const sudoUser = env['SUDO_USER'];
  if (sudoUser === undefined || sudoUser === '') {
    return { actor: { kind: 'cli', id: user.name, uid: user.uid }, source: 'cli' };
  }
  const name = sudoUser.slice(0, MAX_NAME_LENGTH);
  const sudoUidText = env['SUDO_UID'] ?? '';
  const sudoUid = /^[0-9]{1,10}$/.test(sudoUidText) ? Number(sudoUidText) : null;
  return { actor: { kind: 'cli', id: user.name, uid: user.uid, name }, source: 'cli', detail: { sudoUser: name, sudoUid } };
}
