// Anthropic's documented constraints on structured outputs
// (output_config.format), for the strict fake of ./anthropic-constraints.ts:
// from the structured-outputs guide ("JSON Schema limitations": the supported
// keywords, formats and regex features; no numeric bounds, string lengths,
// array bounds beyond minItems 0 or 1, recursion or external $ref; at most 16
// parameters with union types and 24 optional parameters) and the errors the
// API answers, as quoted in public issues ("For 'object' type,
// 'additionalProperties' must be explicitly set to false", "Schemas contains
// too many parameters with union types"). A keyword outside the documented
// list (`$schema`, `oneOf`...) is refused too: the documented list is what the
// gateway may rely on.

export type Json = Record<string, unknown>;

/** A constraint the request breaks, with Anthropic's wording; both checkers throw it. */
export class Violation extends Error {}

export function fail(message: string): never {
  throw new Violation(message);
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function checkKeys(block: Json, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(block)) if (!allowed.includes(key)) fail(`${where}.${key}: Extra inputs are not permitted`);
}

/** The keywords and string formats Anthropic's structured outputs document. */
const SCHEMA_KEYWORDS = new Set(['type', 'description', 'title', 'default', 'enum', 'const', 'anyOf', 'allOf', '$ref', '$defs', 'definitions', 'properties', 'required', 'additionalProperties', 'items', 'format', 'minItems', 'pattern']);
const SCHEMA_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']);
/** Regex features the guide lists as unsupported: backreferences, lookaround, word boundaries. */
const UNSUPPORTED_REGEX = /\\[1-9]|\\k<|\(\?<?[=!]|\\[bB]/;
const MAX_UNIONS = 16;
const MAX_OPTIONAL = 24;

class OutputSchemaCheck {
  readonly root: Json;
  unions = 0;
  optional = 0;
  /** The subschemas being walked, for recursion through $ref. */
  readonly open: Json[] = [];
  /** Each subschema counts once, however often a $ref leads to it. */
  readonly counted = new Set<Json>();

  constructor(root: Json) {
    this.root = root;
  }

  resolve(ref: unknown, at: string): Json {
    if (ref === '#') return this.root;
    const match = typeof ref === 'string' ? /^#\/(\$defs|definitions)\/(.+)$/.exec(ref) : null;
    if (match === null) fail(`${at}: External $ref is not supported`);
    const defs = this.root[match[1] as string];
    const target = isObject(defs) ? defs[(match[2] as string).replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
    if (!isObject(target)) fail(`${at}: $ref ${String(ref)} could not be resolved`);
    return target;
  }

  walk(node: unknown, at: string): void {
    if (!isObject(node)) fail(`${at}: Input should be a valid dictionary`);
    if (this.open.includes(node)) fail(`${at}: Recursive schemas are not supported`);
    this.open.push(node);
    for (const key of Object.keys(node)) {
      if (!SCHEMA_KEYWORDS.has(key)) fail(`${at}: Unsupported keyword '${key}'`);
    }
    const type = node['type'];
    const first = !this.counted.has(node);
    this.counted.add(node);
    if (first && (Array.isArray(node['anyOf']) || (Array.isArray(type) && type.length > 1))) this.unions++;
    if (type === 'object' || (Array.isArray(type) && type.includes('object'))) {
      if (node['additionalProperties'] !== false) fail(`${at}: For 'object' type, 'additionalProperties' must be explicitly set to false`);
      const properties = isObject(node['properties']) ? node['properties'] : {};
      const required = Array.isArray(node['required']) ? node['required'] : [];
      for (const [name, child] of Object.entries(properties)) {
        if (first && !required.includes(name)) this.optional++;
        this.walk(child, `${at}.properties.${name}`);
      }
    }
    if (node['items'] !== undefined) this.walk(node['items'], `${at}.items`);
    const minItems = node['minItems'];
    if (minItems !== undefined && minItems !== 0 && minItems !== 1) fail(`${at}: minItems values other than 0 or 1 are not supported`);
    const format = node['format'];
    if (format !== undefined && !SCHEMA_FORMATS.has(format as string)) fail(`${at}: Unsupported format '${String(format)}'`);
    const pattern = node['pattern'];
    if (pattern !== undefined && (typeof pattern !== 'string' || UNSUPPORTED_REGEX.test(pattern))) fail(`${at}: Unsupported regex pattern`);
    const values = node['enum'];
    if (values !== undefined && (!Array.isArray(values) || values.some((v) => typeof v === 'object' && v !== null))) fail(`${at}.enum: Complex types within enums are not supported`);
    for (const key of ['anyOf', 'allOf'] as const) {
      const branches = node[key];
      if (branches === undefined) continue;
      if (!Array.isArray(branches)) fail(`${at}.${key}: Input should be a valid list`);
      branches.forEach((branch, k) => this.walk(branch, `${at}.${key}.${k}`));
    }
    if (node['$ref'] !== undefined) this.walk(this.resolve(node['$ref'], at), `${at}.$ref`);
    this.open.pop();
  }
}

/** Throws a Violation for the first structured-output constraint `config` (a request's output_config) breaks. */
export function checkOutputConfig(config: unknown): void {
  if (config === undefined) return;
  if (!isObject(config)) fail('output_config: Input should be a valid dictionary');
  checkKeys(config, ['format', 'effort'], 'output_config');
  const format = config['format'];
  if (format === undefined || format === null) return;
  if (!isObject(format)) fail('output_config.format: Input should be a valid dictionary');
  checkKeys(format, ['type', 'schema'], 'output_config.format');
  if (format['type'] !== 'json_schema') fail("output_config.format.type: Input should be 'json_schema'");
  const schema = format['schema'];
  if (!isObject(schema)) fail('output_config.format.schema: Field required');
  const check = new OutputSchemaCheck(schema);
  check.walk(schema, 'output_config.format.schema');
  for (const key of ['$defs', 'definitions'] as const) {
    const defs = schema[key];
    if (defs === undefined) continue;
    if (!isObject(defs)) fail(`output_config.format.schema.${key}: Input should be a valid dictionary`);
    for (const [name, def] of Object.entries(defs)) check.walk(def, `output_config.format.schema.${key}.${name}`);
  }
  if (check.unions > MAX_UNIONS) {
    fail(`Schemas contains too many parameters with union types (${check.unions} parameters with type arrays or anyOf) which exceeds the limit: ${MAX_UNIONS}`);
  }
  if (check.optional > MAX_OPTIONAL) fail(`Schemas contains too many optional parameters (${check.optional}) which exceeds the limit: ${MAX_OPTIONAL}`);
}
