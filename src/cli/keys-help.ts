// The help texts of `portcullis keys` and its subcommands.
import { KEY_SETTING_HELP } from './key-options.ts';
import { DEFAULT_RELOAD_INTERVAL_MS } from '../state/key-store-port.ts';

const REVOKE_DELAY_SECONDS = DEFAULT_RELOAD_INTERVAL_MS / 1000;

export const KEYS_USAGE = `Usage: portcullis keys <command> [options]

Manage the API keys clients send as "Authorization: Bearer <key>".

Commands:
  create --name NAME   Create a key and print it once
  list                 List keys with their status and last use (never the keys)
  show ID              One key's settings: allowed aliases, expiry, limits, guard
  update ID            Change a key's name, allowed aliases, expiry, limits or guard
  rotate ID            Give a key a new secret (same id and history); prints it once
  revoke ID            Revoke a key by id
  usage [ID]           Requests, tokens, errors and cost per key, or one key's days or hours

Options:
  -h, --help           Show this help; "portcullis keys <command> --help" for a command
`;

export const CREATE_USAGE = `Usage: portcullis keys create --name NAME [settings] [--json]

Create an API key. The key is printed once and cannot be shown again:
only its SHA-256 hash is stored.

Options:
  --name NAME           A label for the key, 1 to 64 printable characters (required)
${KEY_SETTING_HELP}  --json                Print {"id","name","prefix","createdAt","expiresAt","allowedAliases","limits","guard","key"} as JSON
  -h, --help            Show this help
`;

export const SHOW_USAGE = `Usage: portcullis keys show ID [--json]

Show one key: status, times, allowed aliases, expiry, limits (never the key) and
the usage recorded for it, with its cost in the config's currency.

Options:
  --json       Print the key's record (without its hash) as JSON
  -h, --help   Show this help
`;

export const UPDATE_USAGE = `Usage: portcullis keys update ID [--name NAME] [settings] [--json]

Change a key's settings; options not given stay as they are. Running servers
apply the change within ${REVOKE_DELAY_SECONDS} second.

Options:
  --name NAME           A new label
${KEY_SETTING_HELP}  --json                Print the updated key as JSON
  -h, --help            Show this help
`;

export const ROTATE_USAGE = `Usage: portcullis keys rotate ID [--json]

Replace a key's secret: same id, settings and usage history, new key printed
once. The old key stops working within ${REVOKE_DELAY_SECONDS} second.

Options:
  --json       Print {"id","name","prefix","rotatedAt","key"} as JSON
  -h, --help   Show this help
`;

export const LIST_USAGE = `Usage: portcullis keys list [--json]

List API keys: id, name, prefix, creation time, last use and status.
The keys themselves are never shown.

Options:
  --json       Print a JSON array of {"id","name","prefix","createdAt","revokedAt","lastUsedAt","status","expiresAt","allowedAliases","limits","guard"}
  -h, --help   Show this help
`;

export const REVOKE_USAGE = `Usage: portcullis keys revoke ID [--json]

Revoke the API key with id ID (see "portcullis keys list"). Running servers
refuse it within ${REVOKE_DELAY_SECONDS} second. Revoking a revoked key is an error.

Options:
  --json       Print the revoked key's {"id","name","prefix","createdAt","revokedAt"} as JSON
  -h, --help   Show this help
`;

export const USAGE_USAGE = `Usage: portcullis keys usage [ID [--granularity day|hour]] [--json]

Per key: requests, prompt, completion and cached tokens, errors and cost, as
recorded by the gateway (streamed completions included). Cost is in the
config's currency, from the prices in the config; usage recorded before
prices were set counts as 0. Running servers add their counters to the
state backend (<dataDir>/usage.json, or Redis) every 5 seconds and when they stop.

With ID: that key's usage per UTC day (the last 30 days) or hour (the last
48 hours), then its all-time totals.

Options:
  --granularity G  With ID: "day" (default) or "hour"
  --json           Print a JSON array of {"id","name","prefix","status","requests","promptTokens",
                   "completionTokens","cachedTokens","errors","costNanos","cost"}; with ID,
                   {"keyId","granularity","buckets","totals","currency"} as the admin API's usage
  -h, --help       Show this help
`;
