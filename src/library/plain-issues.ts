// A config problem as the public ConfigIssue: plain data a host can keep (no
// class, no getters). Kept out of the files the public entries reach, whose
// declarations may name only src/api types.
import type { ConfigIssue } from '../api/config.ts';
import type { ConfigIssue as InternalConfigIssue } from '../config/config-issues.ts';

export function plainIssues(issues: readonly InternalConfigIssue[]): ConfigIssue[] {
  return issues.map(({ code, path: at, message }) => ({ code, path: at, message }));
}
