// What security.requireFips refuses at start beyond the config itself: an
// admin password stored with a hash FIPS 140-3 does not approve (scrypt). The
// refusal is at start, not at login, so the operator reads it in the same
// place as every other reason the gateway will not run, and the dashboard
// never answers "wrong password" for a right one. docs/crypto.md.
import { adminFilePath, AdminCredentialsError, readAdminCredentials, type AdminCredentials } from '../admin/admin-credentials.ts';
import { fipsApprovalProblem } from '../admin/password-hash.ts';
import type { SecurityConfig } from '../config/security-config.ts';

/** The sentence refusing `credentials` (admin.json at `file`) under `security`, or null when it may serve. */
export function adminPasswordFipsProblem(security: SecurityConfig, file: string, credentials: AdminCredentials | null): string | null {
  if (!security.requireFips || credentials === null) return null;
  const problem = fipsApprovalProblem(credentials.passwordHash);
  if (problem === null) return null;
  return (
    `security.requireFips refuses the admin password in ${file}: ${problem}. Set it again with ` +
    '"portcullis admin set-password" (under security.requireFips it writes a pbkdf2-sha256 hash), or set security.requireFips to false'
  );
}

/**
 * adminPasswordFipsProblem for the data directory's admin.json. A file that
 * cannot be read is left to the login, which names its problem as it does
 * without requireFips.
 */
export async function checkAdminPasswordFips(security: SecurityConfig, dataDir: string): Promise<string | null> {
  if (!security.requireFips) return null;
  let credentials: AdminCredentials | null;
  try {
    credentials = await readAdminCredentials(dataDir);
  } catch (err) {
    if (err instanceof AdminCredentialsError) return null;
    throw err;
  }
  return adminPasswordFipsProblem(security, adminFilePath(dataDir), credentials);
}
