// What security.requireFips refuses at start beyond the config itself: an
// admin password stored with a hash FIPS 140-3 does not approve (scrypt). It
// is a config issue, so checkConfig and createGateway agree and the operator
// reads it with every other reason the gateway will not run. Each login asks
// again (src/admin/admin-server.ts): admin.json can be replaced while the
// gateway runs. docs/crypto.md.
import { adminFilePath, AdminCredentialsError, adminPasswordFipsProblem, readAdminCredentialsSync, type AdminCredentials } from '../admin/admin-credentials.ts';
import type { SecurityConfig } from '../config/security-config.ts';
import { ConfigIssueCode, type ConfigIssue } from '../config/config-issues.ts';

/**
 * The issue refusing the data directory's admin.json under requireFips, or none.
 * Nothing uses that password without the admin listener (admin.enabled false,
 * `serve --no-admin`), so the check is skipped then. A file that cannot be read
 * is left to the login, which names its problem as it does without requireFips.
 */
export function adminPasswordFipsIssues(config: { security: SecurityConfig; admin: { enabled: boolean }; dataDir: string }): ConfigIssue[] {
  if (!config.security.requireFips || !config.admin.enabled) return [];
  let credentials: AdminCredentials | null;
  try {
    credentials = readAdminCredentialsSync(config.dataDir);
  } catch (err) {
    if (err instanceof AdminCredentialsError) return [];
    throw err;
  }
  if (credentials === null) return [];
  const problem = adminPasswordFipsProblem(adminFilePath(config.dataDir), credentials);
  // conflict: the setting and the stored hash exclude each other; either one is the fix.
  return problem === null ? [] : [{ code: ConfigIssueCode.Conflict, path: 'security.requireFips', message: problem }];
}
