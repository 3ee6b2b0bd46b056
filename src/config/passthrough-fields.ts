// An operator's list of top-level request fields that a door's client may
// carry through to an upstream that receives the client's own body
// (messagesPassthrough of an anthropic provider, responsesPassthrough of an
// openai provider in Responses passthrough mode). The checks catch the
// mistakes that would silently allow nothing (a typo of a documented field)
// or skip the gateway's own checks (naming a documented field).
import { join, type Checker, type Obj } from './config-checker.ts';
import { editDistance } from './config-issues.ts';

/** One API's passthrough setting. */
export interface PassthroughFieldsSetting {
  /** The setting's name, e.g. "messagesPassthrough". */
  readonly setting: string;
  /** The API, as the messages name it: "Messages", "Responses". */
  readonly api: string;
  /** The top-level fields the gateway's validator checks itself. */
  readonly documented: readonly string[];
  /** A plausible entry for the messages, e.g. '["speed"]'. */
  readonly example: string;
}

const MAX_PASSTHROUGH = 32;
/** OpenAI's and Anthropic's field names: snake_case, lower-case. */
const FIELD_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** The names the setting lists, each checked; [] when it is not set. */
export function parsePassthroughFields(c: Checker, o: Obj, at: string, spec: PassthroughFieldsSetting): string[] {
  const value = o[spec.setting];
  if (value === undefined) return [];
  const vat = join(at, spec.setting);
  if (!Array.isArray(value) || value.length > MAX_PASSTHROUGH) {
    return c.report(vat, { code: 'not_array', message: `must be an array of at most ${MAX_PASSTHROUGH} top-level ${spec.api} field names, e.g. ${spec.example}` }) ?? [];
  }
  const names: string[] = [];
  value.forEach((name: unknown, i) => {
    const iat = `${vat}[${i}]`;
    if (typeof name !== 'string' || !FIELD_NAME.test(name)) {
      c.report(iat, { code: 'invalid_value', message: 'must be a plain top-level field name: lower-case letters, digits and underscores, starting with a letter (at most 64)' });
      return;
    }
    if (spec.documented.includes(name)) {
      c.report(iat, { code: 'invalid_value', message: `"${name}" is a documented ${spec.api} field, which the gateway checks itself: remove it` });
      return;
    }
    const near = spec.documented.find((f) => editDistance(name, f) <= (f.length <= 5 ? 1 : 2));
    if (near !== undefined) {
      c.report(iat, { code: 'invalid_value', message: `"${name}" is close to the documented field "${near}" (checked by the gateway, no passthrough needed): fix the name or remove it` });
      return;
    }
    if (names.includes(name)) {
      c.report(iat, { code: 'conflict', message: `"${name}" is listed twice` });
      return;
    }
    names.push(name);
  });
  return names;
}

/** For a provider type without `settings`: one issue per setting present,
 * with `why`; returns `o` without them (the same object when it has none). */
export function refuseSettings(c: Checker, o: Obj, at: string, settings: readonly string[], why: string): Obj {
  let rest = o;
  for (const name of settings) {
    if (o[name] === undefined) continue;
    c.report(join(at, name), { code: 'conflict', message: why });
    if (rest === o) rest = { ...o };
    delete rest[name];
  }
  return rest;
}
