// Problems found in a config file, as data: a stable code, the setting's path
// (`aliases.x.targets[1].provider`, empty for the file itself) and the message.
// The checker collects every issue instead of stopping at the first, so an
// operator fixes a file in one pass. All generic wording is here, in one switch
// on the code; a rule that only one setting has (a conflict, a name pattern)
// brings its own sentence but still a code from this list.

export const ConfigIssueCode = {
  /** The file itself: missing, unreadable, too large, not JSON. */
  Unreadable: 'unreadable',
  NotObject: 'not_object',
  UnknownSetting: 'unknown_setting',
  Required: 'required',
  NotString: 'not_string',
  NotInteger: 'not_integer',
  NotBoolean: 'not_boolean',
  NotOneOf: 'not_one_of',
  NotArray: 'not_array',
  TooMany: 'too_many',
  /** Names a provider or alias that the file does not define. */
  UnknownReference: 'unknown_reference',
  /** Two settings that exclude each other, one that must differ from another, or a setting and a file it refuses (security.requireFips and a scrypt admin.json). */
  Conflict: 'conflict',
  InvalidName: 'invalid_name',
  Reserved: 'reserved',
  InvalidValue: 'invalid_value',
  /** An upstream key or Redis password that cannot be found at start. */
  MissingCredential: 'missing_credential',
  /** A certificate, key or CA file that is missing, unreadable, not valid PEM, mismatched or out of date. */
  InvalidTlsFile: 'invalid_tls_file',
  /** security.requireFips is true and OpenSSL runs without a FIPS provider. */
  FipsUnavailable: 'fips_unavailable',
} as const;
export type ConfigIssueCode = (typeof ConfigIssueCode)[keyof typeof ConfigIssueCode];

export interface ConfigIssue {
  code: ConfigIssueCode;
  path: string;
  message: string;
}

/** Not a problem yet but soon one: check-config prints it and still exits 0. */
export const ConfigWarningCode = {
  /** A certificate that expires within EXPIRY_WARNING_DAYS (./pem-checks.ts). */
  CertificateExpiresSoon: 'certificate_expires_soon',
  /** An alias whose targets' provider types refuse different requests (../providers/request-restrictions.ts). */
  AliasTargetsDiffer: 'alias_targets_differ',
} as const;
export type ConfigWarningCode = (typeof ConfigWarningCode)[keyof typeof ConfigWarningCode];

export interface ConfigWarning {
  code: ConfigWarningCode;
  path: string;
  message: string;
}

type SpecificCode = Exclude<
  ConfigIssueCode,
  'not_object' | 'unknown_setting' | 'required' | 'not_string' | 'not_integer' | 'not_boolean' | 'not_one_of' | 'unknown_reference'
>;

/** What went wrong, before it is put in words. */
export type IssueDetail =
  | { code: 'not_object' | 'not_string' | 'not_boolean' }
  | { code: 'unknown_setting'; allowed: readonly string[]; suggestion: string | null }
  | { code: 'required'; hint?: string }
  | { code: 'not_integer'; min: number; max: number }
  | { code: 'not_one_of'; options: readonly string[] }
  | { code: 'unknown_reference'; kind: 'provider' | 'alias'; name: string }
  | { code: SpecificCode | 'required'; message: string };

export function issueMessage(detail: IssueDetail): string {
  switch (detail.code) {
    case 'not_object':
      return 'must be an object';
    case 'not_string':
      return 'must be a non-empty string';
    case 'not_boolean':
      return 'must be true or false';
    case 'unknown_setting':
      // A near miss names the one fix; otherwise the list shows what fits here.
      if (detail.suggestion !== null) return `unknown setting; did you mean '${detail.suggestion}'?`;
      return `unknown setting (allowed here: ${detail.allowed.join(', ')})`;
    case 'required':
      if ('message' in detail) return detail.message;
      return detail.hint === undefined ? 'is required' : `is required ${detail.hint}`;
    case 'not_integer':
      return `must be an integer from ${detail.min} to ${detail.max}`;
    case 'not_one_of':
      return `must be ${choices(detail.options)}`;
    case 'unknown_reference': {
      const section = detail.kind === 'provider' ? 'providers' : 'aliases';
      return `names ${detail.kind} '${detail.name}', which is not defined under "${section}"`;
    }
    default:
      return detail.message;
  }
}

/** `"a" or "b"`, `"a", "b" or "c"`; a longer list reads better as `one of "a", "b", ...`. */
export function choices(options: readonly string[]): string {
  const quoted = options.map((o) => `"${o}"`);
  if (quoted.length > 3) return `one of ${quoted.join(', ')}`;
  if (quoted.length === 1) return quoted[0] as string;
  return `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}

/** `path: message`, or the message alone for the file itself. */
export function formatIssue(issue: ConfigIssue): string {
  return issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
}

/**
 * The allowed key an unknown one was most likely meant to be: the same key in
 * another case (`baseURL`), or one within a small edit distance, a swap of two
 * neighbours counting as one edit (`prot`, `modle`). Null when nothing is close.
 */
export function didYouMean(key: string, allowed: readonly string[]): string | null {
  const lower = key.toLowerCase();
  const sameCase = allowed.find((a) => a.toLowerCase() === lower);
  if (sameCase !== undefined) return sameCase;
  const budget = lower.length <= 4 ? 1 : 2;
  let best: string | null = null;
  let bestDistance = budget + 1;
  for (const candidate of allowed) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return Math.abs(a.length - b.length);
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const above = rows[i - 1] as number[];
      let d = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row.push(d);
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}
