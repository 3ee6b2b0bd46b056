// response_format json_schema → Anthropic's structured outputs
// (`output_config.format: {type: "json_schema", schema}`), or the 400 that says
// why there is none. Pure. Anthropic constrains the answer to the schema it is
// sent, within a subset of JSON Schema narrower than OpenAI's strict mode:
// https://docs.claude.com/en/docs/build-with-claude/structured-outputs
// ("JSON Schema limitations"). It refuses numeric bounds (minimum, maximum,
// multipleOf, ...), string lengths, array bounds other than minItems 0 or 1,
// recursive schemas, external $ref, enums of non-primitive values, objects
// without "additionalProperties": false, more than 16 parameters with union
// types (anyOf or a type array) and more than 24 optional parameters.
//
// With strict true the gateway checks the answer against the whole schema
// (src/schema/compile.ts), so a keyword Anthropic refuses but the check holds
// may be left out of what is sent: the answer is still held to it. Without
// strict true nothing checks the answer, so such a keyword is a 400 instead of
// a bound that would silently stop holding.
import type { JsonSchemaFormat } from '../chat/types.ts';
import { InvalidRequestError } from '../errors/api-error.ts';

export interface AnthropicOutputFormat {
  type: 'json_schema';
  schema: Record<string, unknown>;
}

/** Anthropic's documented limits on a structured output schema. */
export const MAX_UNION_PARAMETERS = 16;
export const MAX_OPTIONAL_PARAMETERS = 24;

/** The string formats Anthropic's structured outputs take. */
const ANTHROPIC_FORMATS: ReadonlySet<string> = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']);
/** Sent as they are (their subschemas translated in turn). */
const SENT: ReadonlySet<string> = new Set(['type', 'description', 'title', 'default', 'const', 'required']);
/** Bounds Anthropic refuses and the gateway's check of a strict answer holds: left out with strict true, a 400 without. */
const CHECKED_ONLY: ReadonlySet<string> = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'maxItems', 'pattern', 'minLength', 'maxLength']);
const ROOT_PARAM = 'response_format.json_schema.schema';
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const LOCAL_REF = /^#\/(\$defs|definitions)\/(.+)$/;

type Json = Record<string, unknown>;
type Segment = string | number;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property even for the name `__proto__` (a property a schema may well have), never the object's prototype. */
function setOwn(out: Json, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  else out[name] = value;
}

/** `response_format.json_schema.schema.properties.a["first name"].items`: the request's own path to a keyword. */
export function schemaParam(path: readonly Segment[]): string {
  let out = ROOT_PARAM;
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function refuse(path: readonly Segment[], why: string): never {
  const param = schemaParam(path);
  throw new InvalidRequestError(`Invalid schema for response_format: '${param}': ${why}`, param, 'unsupported_schema');
}

const NOT_SUPPORTED = 'is not supported by the provider behind this model alias';
const UNCHECKED_HINT = 'Set "strict": true (the gateway then checks the answer against it), or remove it.';

interface Ref {
  path: Segment[];
  /** The definition the $ref sits in (`$defs/name`), or '' for the rest of the schema. */
  from: string;
  /** The definition it names, or '' for the root (`#`). */
  to: string;
}

class OutputSchemaTranslation {
  readonly checked: boolean;
  readonly refs: Ref[] = [];
  readonly definitions = new Set<string>();
  unions = 0;
  optional = 0;

  constructor(checked: boolean) {
    this.checked = checked;
  }

  /** The schema at `path` as Anthropic takes it; `from` is the definition it belongs to. */
  node(value: unknown, path: Segment[], from: string): Json {
    if (!isObject(value)) refuse(path, 'the provider behind this model alias takes a schema only as a JSON object.');
    const out: Json = {};
    for (const key of Object.keys(value)) {
      const child = value[key];
      const at = [...path, key];
      if (key === '$schema') continue; // names the dialect; constrains nothing
      if (SENT.has(key)) out[key] = child;
      else if (key === 'enum') out[key] = this.enumOf(child, at);
      else if (key === 'format') this.format(child, at, out);
      else if (key === 'minItems') this.minItems(child, at, out);
      else if (key === 'additionalProperties') {
        if (child !== false) refuse(at, `the provider behind this model alias takes only "additionalProperties": false.`);
        out[key] = false;
      } else if (key === 'anyOf') {
        if (!Array.isArray(child)) refuse(at, '"anyOf" must be an array of schemas.');
        out[key] = child.map((branch, k) => this.node(branch, [...at, k], from));
      } else if (key === 'items') out[key] = this.node(child, at, from);
      else if (key === 'properties') out[key] = this.properties(child, at, from);
      else if (key === '$ref') out[key] = this.ref(child, at, from);
      else if ((key === '$defs' || key === 'definitions') && path.length === 0) out[key] = this.defs(child, key, at);
      else if (CHECKED_ONLY.has(key)) {
        if (!this.checked) refuse(at, `"${key}" ${NOT_SUPPORTED} without "strict": true. ${UNCHECKED_HINT}`);
      } else refuse(at, `"${key}" ${NOT_SUPPORTED}.`);
    }
    this.count(value, path);
    return out;
  }

  enumOf(values: unknown, at: Segment[]): unknown {
    if (!Array.isArray(values) || values.some((v) => typeof v === 'object' && v !== null)) {
      refuse(at, 'the provider behind this model alias takes an "enum" only of strings, numbers, booleans and null.');
    }
    return values;
  }

  format(value: unknown, at: Segment[], out: Json): void {
    if (typeof value === 'string' && ANTHROPIC_FORMATS.has(value)) out['format'] = value;
    else if (!this.checked) refuse(at, `the format ${JSON.stringify(value)} ${NOT_SUPPORTED}; it takes ${[...ANTHROPIC_FORMATS].join(', ')}.`);
  }

  /** Anthropic takes minItems 0 or 1. A larger bound the check holds is sent as 1,
   * which keeps the answer from being empty, the rest of it being the check's. */
  minItems(value: unknown, at: Segment[], out: Json): void {
    if (value === 0 || value === 1) out['minItems'] = value;
    else if (this.checked && typeof value === 'number' && value > 1) out['minItems'] = 1;
    else refuse(at, `"minItems" above 1 ${NOT_SUPPORTED} without "strict": true. ${UNCHECKED_HINT}`);
  }

  properties(value: unknown, at: Segment[], from: string): Json {
    if (!isObject(value)) refuse(at, '"properties" must be an object of schemas.');
    const out: Json = {};
    for (const name of Object.keys(value)) setOwn(out, name, this.node(value[name], [...at, name], from));
    return out;
  }

  ref(value: unknown, at: Segment[], from: string): unknown {
    if (value === '#') {
      this.refs.push({ path: at, from, to: '' });
      return value;
    }
    const local = typeof value === 'string' ? LOCAL_REF.exec(value) : null;
    if (local === null) refuse(at, `only a "$ref" within the schema ("#", "#/$defs/<name>") is taken by the provider behind this model alias.`);
    const name = (local[2] as string).replaceAll('~1', '/').replaceAll('~0', '~');
    this.refs.push({ path: at, from, to: `${local[1]}/${name}` });
    return value;
  }

  defs(value: unknown, key: string, at: Segment[]): Json {
    if (!isObject(value)) refuse(at, `"${key}" must be an object of schemas.`);
    const out: Json = {};
    for (const name of Object.keys(value)) {
      this.definitions.add(`${key}/${name}`);
      setOwn(out, name, this.node(value[name], [...at, name], `${key}/${name}`));
    }
    return out;
  }

  count(node: Json, path: Segment[]): void {
    const type = node['type'];
    if (Array.isArray(node['anyOf']) || (Array.isArray(type) && type.length > 1)) this.unions++;
    const isObjectType = type === 'object' || (Array.isArray(type) && type.includes('object'));
    if (!isObjectType) return;
    const properties = isObject(node['properties']) ? Object.keys(node['properties']) : [];
    const required = new Set(Array.isArray(node['required']) ? node['required'] : []);
    for (const name of properties) if (!required.has(name)) this.optional++;
    if (node['additionalProperties'] !== false) {
      refuse([...path, 'additionalProperties'], `the provider behind this model alias needs "additionalProperties": false on every object.`);
    }
  }

  /** Anthropic refuses recursion: the first $ref that leads back to a schema holding it. */
  checkRefs(): void {
    for (const ref of this.refs) {
      if (ref.to !== '' && !this.definitions.has(ref.to)) refuse(ref.path, `the definition ${JSON.stringify(ref.to)} does not exist.`);
    }
    const component = cycleComponents(this.refs);
    for (const ref of this.refs) {
      if (component.get(ref.to) === component.get(ref.from)) {
        refuse(ref.path, `a recursive schema ${NOT_SUPPORTED}: this "$ref" leads back to the schema that holds it.`);
      }
    }
  }
}

/**
 * The strongly connected component of each schema ('' the root, `$defs/name`
 * a definition) in the graph whose edges are the $refs. A $ref leads back to
 * the schema holding it exactly when both ends share a component (a $ref to
 * itself included). Tarjan's algorithm without recursion, so a schema's size
 * costs linear time and no stack.
 */
function cycleComponents(refs: readonly Ref[]): Map<string, number> {
  const ids = new Map<string, number>();
  const idOf = (name: string): number => {
    let id = ids.get(name);
    if (id === undefined) ids.set(name, (id = ids.size));
    return id;
  };
  const pairs = refs.map(({ from, to }) => [idOf(from), idOf(to)] as const);
  const count = ids.size;
  const edges: number[][] = Array.from({ length: count }, () => []);
  for (const [from, to] of pairs) (edges[from] as number[]).push(to);
  const index = new Int32Array(count).fill(-1);
  const low = new Int32Array(count);
  const component = new Int32Array(count);
  const onStack = new Uint8Array(count);
  const stack: number[] = [];
  const work: number[] = []; // pairs: node, next edge
  let counter = 0;
  let components = 0;
  const open = (node: number): void => {
    index[node] = low[node] = counter++;
    stack.push(node);
    onStack[node] = 1;
    work.push(node, 0);
  };
  for (let start = 0; start < count; start++) {
    if (index[start] !== -1) continue;
    open(start);
    while (work.length > 0) {
      const node = work[work.length - 2] as number;
      const next = work[work.length - 1] as number;
      const targets = edges[node] as number[];
      if (next < targets.length) {
        work[work.length - 1] = next + 1;
        const target = targets[next] as number;
        if (index[target] === -1) open(target);
        else if (onStack[target] === 1) low[node] = Math.min(low[node] as number, index[target] as number);
        continue;
      }
      work.length -= 2;
      if (work.length > 0) {
        const parent = work[work.length - 2] as number;
        low[parent] = Math.min(low[parent] as number, low[node] as number);
      }
      if (low[node] === index[node]) {
        let member: number;
        do {
          member = stack.pop() as number;
          onStack[member] = 0;
          component[member] = components;
        } while (member !== node);
        components++;
      }
    }
  }
  const byName = new Map<string, number>();
  for (const [name, id] of ids) byName.set(name, component[id] as number);
  return byName;
}

/**
 * The output format for `format`, or InvalidRequestError (400, code
 * unsupported_schema, param the keyword's path in the request). `strict`
 * true: the gateway checks the answer, so the bounds it holds may be left out.
 */
export function toAnthropicOutputFormat(format: JsonSchemaFormat): AnthropicOutputFormat {
  const { schema, description, strict } = format.json_schema;
  if (schema === undefined) refuse([], `a json_schema without a schema ${NOT_SUPPORTED}.`);
  const translation = new OutputSchemaTranslation(strict === true);
  const sent = translation.node(schema, [], '');
  translation.checkRefs();
  if (translation.unions > MAX_UNION_PARAMETERS) {
    refuse([], `it has ${translation.unions} parameters with union types (anyOf, or a type array such as ["string", "null"]); the provider behind this model alias takes at most ${MAX_UNION_PARAMETERS}.`);
  }
  if (translation.optional > MAX_OPTIONAL_PARAMETERS) {
    refuse([], `it has ${translation.optional} optional properties (not listed in "required"); the provider behind this model alias takes at most ${MAX_OPTIONAL_PARAMETERS}.`);
  }
  // OpenAI shows the format's description to the model; Anthropic's format has
  // no such field, so it goes where the model reads it: the schema's own.
  if (description !== undefined && description !== '') {
    const own = sent['description'];
    sent['description'] = typeof own === 'string' && own !== '' && own !== description ? `${description}\n\n${own}` : description;
  }
  return { type: 'json_schema', schema: sent };
}
