// The top-level "embeddings" section: the bounds of a POST /v1/embeddings
// request (docs/config.md, "Embeddings"). A count bound cannot exceed
// limits.maxMembers, nor a string's bytes limits.maxStringBytes: the JSON
// parser refuses such a body first, with a less specific error, so a larger
// setting would only mislead. Unset, each bound is its default or that
// limit, whichever is lower, so a config that lowers the limits stays valid.
import type { ServerLimits } from './config.ts';
import type { Checker } from './config-checker.ts';

export interface EmbeddingsConfig {
  /** Inputs in one request. */
  maxInputs: number;
  /** UTF-8 bytes of one text input. */
  maxInputBytes: number;
  /** Token ids in one token-array input. */
  maxInputTokens: number;
  /** Bytes of all inputs together (a token id counts 4). */
  maxTotalBytes: number;
  /** Parts of one split request in flight at once, to one target. */
  maxConcurrentCalls: number;
}

export const DEFAULT_EMBEDDINGS: Readonly<EmbeddingsConfig> = {
  maxInputs: 2048,
  maxInputBytes: 65_536,
  maxInputTokens: 8192,
  maxTotalBytes: 4 * 1024 * 1024,
  maxConcurrentCalls: 4,
};

const SETTINGS = ['maxInputs', 'maxInputBytes', 'maxInputTokens', 'maxTotalBytes', 'maxConcurrentCalls'] as const;

/** The section checked against `limits` (already parsed); defaults where it is missing or wrong. */
export function parseEmbeddings(c: Checker, value: unknown, limits: Pick<ServerLimits, 'maxMembers' | 'maxStringBytes'>): EmbeddingsConfig {
  const capped: EmbeddingsConfig = {
    ...DEFAULT_EMBEDDINGS,
    maxInputs: Math.min(DEFAULT_EMBEDDINGS.maxInputs, limits.maxMembers),
    maxInputTokens: Math.min(DEFAULT_EMBEDDINGS.maxInputTokens, limits.maxMembers),
    maxInputBytes: Math.min(DEFAULT_EMBEDDINGS.maxInputBytes, limits.maxStringBytes),
  };
  if (value === undefined) return capped;
  const o = c.object(value, 'embeddings', SETTINGS);
  if (o === undefined) return capped;
  const config: EmbeddingsConfig = {
    maxInputs: c.int(o, 'maxInputs', 'embeddings', capped.maxInputs, 1, 1_000_000),
    maxInputBytes: c.int(o, 'maxInputBytes', 'embeddings', capped.maxInputBytes, 1, 64 * 1024 * 1024),
    maxInputTokens: c.int(o, 'maxInputTokens', 'embeddings', capped.maxInputTokens, 1, 1_000_000),
    maxTotalBytes: c.int(o, 'maxTotalBytes', 'embeddings', capped.maxTotalBytes, 1, 1024 * 1024 * 1024),
    maxConcurrentCalls: c.int(o, 'maxConcurrentCalls', 'embeddings', capped.maxConcurrentCalls, 1, 64),
  };
  const within = (key: 'maxInputs' | 'maxInputTokens' | 'maxInputBytes', limit: 'maxMembers' | 'maxStringBytes', what: string): void => {
    if (o[key] === undefined || config[key] <= limits[limit]) return;
    c.report(`embeddings.${key}`, {
      code: 'conflict',
      message: `must not exceed limits.${limit} (${limits[limit]}): the JSON parser refuses ${what} first; lower it, or raise limits.${limit}`,
    });
    config[key] = capped[key];
  };
  within('maxInputs', 'maxMembers', 'a longer input array');
  within('maxInputTokens', 'maxMembers', 'a longer token array');
  within('maxInputBytes', 'maxStringBytes', 'a longer string');
  if (config.maxInputBytes > config.maxTotalBytes && o['maxInputBytes'] !== undefined) {
    c.report('embeddings.maxInputBytes', { code: 'conflict', message: `must not exceed embeddings.maxTotalBytes (${config.maxTotalBytes}): one input is part of the total` });
  }
  return config;
}
