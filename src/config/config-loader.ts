// I/O shell around parseConfig: finds the file (--config, then
// PORTCULLIS_CONFIG), reads it, and falls back to the embedded default.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { JsonParseError, parseJson, renderJsonPath } from '../json/parser.ts';
import { positionAt } from './text-position.ts';
import { ConfigError, type GatewayConfig } from './config.ts';
import { parseConfig } from './config-parser.ts';
import { ConfigIssueCode } from './config-issues.ts';
import { providerCredentials } from './provider-types.ts';
import { readConfigFile } from './config-files.ts';

export const CONFIG_ENV = 'PORTCULLIS_CONFIG';
export const DATA_DIR_ENV = 'PORTCULLIS_DATA_DIR';
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The embedded default: the demo provider behind service-chat and
 * service-vision, so service-auto can be seen choosing by image
 * (`x-portcullis-route: service-vision; reason=image_url`), and behind
 * service-embed, whose deterministic vectors let an embeddings client run
 * without any model.
 */
export function embeddedConfigValue(): unknown {
  return {
    listen: { host: '127.0.0.1', port: 8080 },
    providers: { demo: { type: 'demo' } },
    aliases: {
      'service-chat': { provider: 'demo', model: 'portcullis-demo' },
      'service-vision': { provider: 'demo', model: 'portcullis-demo', capabilities: ['vision'] },
      'service-embed': { kind: 'embeddings', provider: 'demo', model: 'portcullis-demo-embed' },
    },
    auto: { default: 'service-chat' },
  };
}

interface LoadConfigOptions {
  /** Value of --config, if given. */
  configPath?: string | undefined;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export function loadConfig(options: LoadConfigOptions = {}): GatewayConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const { value, file } = readConfigValue(options);
  const config = file === null ? parseConfig(value, null, cwd) : parseConfig(value, file, path.dirname(file));
  const dataDir = nonEmpty(env[DATA_DIR_ENV]);
  return dataDir === undefined ? config : { ...config, dataDir: path.resolve(cwd, dataDir) };
}

/**
 * The config's JSON value, unchecked, and the file it came from (null: the
 * embedded default), found as loadConfig finds it. Throws ConfigError for a
 * file that cannot be read or is not JSON.
 */
export function readConfigValue(options: LoadConfigOptions = {}): { value: unknown; file: string | null } {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const given = options.configPath ?? nonEmpty(env[CONFIG_ENV]);
  if (given === undefined) return { value: embeddedConfigValue(), file: null };
  const file = path.resolve(cwd, given);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? 'error'})`;
    throw new ConfigError(file, '', why, ConfigIssueCode.Unreadable);
  }
  if (bytes.length > MAX_CONFIG_BYTES) throw new ConfigError(file, '', `is larger than ${MAX_CONFIG_BYTES} bytes`, ConfigIssueCode.Unreadable);
  let value: unknown;
  try {
    value = parseJson(bytes, { rejectDuplicateKeys: true });
  } catch (err) {
    if (err instanceof JsonParseError && err.code === 'number_out_of_range' && err.path !== undefined && err.path.length > 0) {
      throw new ConfigError(file, renderJsonPath(err.path), 'is a number beyond the largest double (1.7976931348623157e308)', ConfigIssueCode.InvalidValue);
    }
    if (err instanceof JsonParseError) {
      // Line and column for the editor; the parser's message keeps the byte offset.
      const { line, column } = positionAt(bytes, err.offset);
      throw new ConfigError(file, '', `is not valid JSON at line ${line}, column ${column}: ${err.message}`, ConfigIssueCode.Unreadable);
    }
    throw err;
  }
  return { value, file };
}

/**
 * Reads the upstream API keys named by `apiKeyEnv` or `apiKeyFile` at start,
 * so a missing key stops the server with a clear message instead of failing
 * requests. A key file (a systemd credential) is read once and trimmed.
 */
export function resolveProviderKeys(config: GatewayConfig, env: NodeJS.ProcessEnv = process.env): Map<string, string | undefined> {
  const keys = new Map<string, string | undefined>();
  for (const [name, provider] of Object.entries(config.providers)) {
    const where = providerCredentials(provider);
    if (where === null) {
      keys.set(name, undefined);
    } else if (where.apiKeyEnv !== null) {
      const key = nonEmpty(env[where.apiKeyEnv]);
      if (key === undefined) {
        throw new ConfigError(config.source, `providers.${name}.apiKeyEnv`, `environment variable ${where.apiKeyEnv} is not set or empty`, MISSING);
      }
      keys.set(name, key);
    } else if (where.apiKeyFile !== null) {
      keys.set(name, readKeyFile(config, name, where.apiKeyFile, env));
    } else {
      keys.set(name, undefined);
    }
  }
  return keys;
}

const MAX_KEY_FILE_BYTES = 16 * 1024;
const MISSING = ConfigIssueCode.MissingCredential;

/** A key file: one line, trimmed, not empty. */
function readKeyFile(config: GatewayConfig, provider: string, file: string, env: NodeJS.ProcessEnv): string {
  const at = `providers.${provider}.apiKeyFile`;
  const { path: resolved, bytes } = readConfigFile(config.source, at, file, env, MAX_KEY_FILE_BYTES, MISSING);
  const text = bytes.toString('utf8').trim();
  if (text === '') throw new ConfigError(config.source, at, `${resolved} is empty`, MISSING);
  if (/[\r\n\0]/.test(text)) throw new ConfigError(config.source, at, `${resolved} must hold the key on one line`, MISSING);
  return text;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
