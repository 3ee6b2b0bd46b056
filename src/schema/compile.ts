// A checker for values against a schema checkStrictSchema accepted: the schema
// is compiled once into linked nodes (./schema-nodes.ts: every `$ref` resolved
// to the node it names, patterns compiled, keywords in fields), so checking a value walks the
// value and those nodes only, never the schema's JSON. The first failure is
// reported with its JSON path in the value (`$.items[2].name`); the path is
// built only on failure, while the recursion unwinds, so a passing check
// allocates nothing for paths.
//
// A check runs on the gateway's one thread, on a value an upstream wrote and a
// schema a client sent, so its work is bounded: every node visit and pattern
// step counts against a budget (maxCheckSteps), and the recursion against a
// frame bound; a check that runs out fails closed, as a mismatch.

import { Match } from './pattern-match.ts';
import { SchemaCompiler, SchemaNode, Type } from './schema-nodes.ts';
import { renderPath, type PathSegment } from './schema-path.ts';
import { checkStrictSchema, DEFAULT_STRICT_SCHEMA_LIMITS, isPlainObject, type StrictSchemaLimits, type StrictSchemaProblem } from './strict-schema.ts';

export interface SchemaViolation {
  /** The JSON path of the first value that breaks the schema (`$` is the whole value). */
  readonly path: string;
  /** The path and what is wrong there, as one sentence. */
  readonly message: string;
}

export interface CompiledSchema {
  check(value: unknown): SchemaViolation | null;
  /** The same checker, whose messages never show the checked value's text: its path (without the names of
   * properties the schema does not have), the types expected and found, and the schema's own words only. */
  readonly withoutValues: CompiledSchema;
  /** check, and the steps it took (for tests and benchmarks: work is pinned by counts, not by clock). */
  checkCounted(value: unknown): { violation: SchemaViolation | null; steps: number };
}

export interface CompileOptions {
  readonly limits?: StrictSchemaLimits;
  /** Values nested deeper than this fail (a recursive schema allows any depth; the stack does not). */
  readonly maxValueDepth?: number;
  /** Node visits and pattern steps one check may take; past it the check fails as unable to finish. */
  readonly maxCheckSteps?: number;
}

export const DEFAULT_MAX_VALUE_DEPTH = 512;
/**
 * A check's budget. A step is a node visit, an enum value compared, an object
 * key counted or a pattern instruction for one character (a failed anyOf
 * branch counts 5, as it builds its message): 10 to 60 ns each on a loaded
 * 2-CPU machine, so a check that runs out has taken 15 to 110 ms, less than
 * JSON.parse takes for a 16 MiB answer (maxResponseBytes). An answer that
 * passes costs about a step per value, and a few per character a pattern
 * reads: two million covers far more than a model writes in one answer.
 */
export const DEFAULT_MAX_CHECK_STEPS = 2_000_000;
/** A failed anyOf branch has built its message (other failures end the check): it costs as much as a few visits. */
const FAILED_BRANCH_STEPS = 4;
/**
 * Nested checkNode calls one check may make: value levels plus the anyOf and
 * `$ref` hops between them. A chain of definitions that stand for each other
 * can be thousands long; Node's default stack holds about 4,500 of these calls,
 * and a list 512 levels deep through a nullable `$ref` takes about 1,030.
 */
const MAX_CHECK_FRAMES = 2_048;

/** Thrown by compileSchema for a schema outside the strict subset; `problem` is checkStrictSchema's answer. */
export class StrictSchemaError extends Error {
  override readonly name = 'StrictSchemaError';
  readonly problem: StrictSchemaProblem;
  constructor(problem: StrictSchemaProblem) {
    super(problem.message);
    this.problem = problem;
  }
}

/** A failure on its way up: segments are pushed while the recursion unwinds, so they are in reverse. */
class Failure {
  readonly reversed: PathSegment[] = [];
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

function typeBit(value: unknown): number {
  switch (typeof value) {
    case 'string': return Type.String;
    case 'number': return Number.isInteger(value) ? Type.Integer : Type.Number;
    case 'boolean': return Type.Boolean;
    case 'object': return value === null ? Type.Null : Array.isArray(value) ? Type.Array : Type.Object;
    default: return 0;
  }
}

/** A value as a message shows it: scalars written out (strings cut at 64 characters), containers by kind;
 * by its kind only when the run shows no values. */
function describe(value: unknown, run: CheckRun): string {
  if (run.quiet) return kindOf(value);
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}...` : value)}`;
  if (typeof value === 'number') return `${Number.isInteger(value) ? 'integer' : 'number'} ${value}`;
  if (typeof value === 'boolean') return `boolean ${value}`;
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}

/** A value's kind, as a message names it without the value. */
function kindOf(value: unknown): string {
  switch (typeBit(value)) {
    case Type.String: return 'a string';
    case Type.Integer: return 'an integer';
    case Type.Number: return 'a number';
    case Type.Boolean: return 'a boolean';
    case Type.Null: return 'null';
    case Type.Array: return 'an array';
    case Type.Object: return 'an object';
    default: return typeof value;
  }
}

/** Whether `value` is a whole multiple of `step`, allowing for binary fractions (0.3 is a multiple of 0.1). */
function isMultiple(value: number, step: number): boolean {
  const quotient = value / step;
  if (Number.isInteger(quotient)) return true;
  return Math.abs(quotient - Math.round(quotient)) <= 1e-9 * Math.max(1, Math.abs(quotient));
}

/** A check's state: its budget, its bounds, and the anyOf failures seen so far. */
class CheckRun {
  /** Steps left; below 0 the check stops. */
  steps: number;
  readonly budget: number;
  readonly maxDepth: number;
  /** Messages name no value of the answer (see CompiledSchema.withoutValues). */
  quiet = false;
  /** Per anyOf node, the values it failed, at which depth and how: a schema that names one definition from many branches checks it once per value. */
  failedAnyOf: Map<SchemaNode, Map<unknown, AnyOfFailure>> | null = null;
  constructor(steps: number, maxDepth: number) {
    this.steps = steps;
    this.budget = steps;
    this.maxDepth = maxDepth;
  }

  reset(quiet: boolean): this {
    this.steps = this.budget;
    this.failedAnyOf = null;
    this.quiet = quiet;
    return this;
  }
}

interface AnyOfFailure {
  readonly depth: number;
  readonly text: string;
  readonly reversed: readonly PathSegment[];
}

/** Thrown through the recursion when a check runs out of steps or frames; check() turns it into a violation at `$`. */
class OutOfBounds {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

function checkNode(node: SchemaNode, value: unknown, depth: number, frames: number, run: CheckRun): Failure | null {
  if (--run.steps < 0) throw new OutOfBounds(`more than ${run.budget} steps`);
  if (frames > MAX_CHECK_FRAMES) throw new OutOfBounds(`schemas nested more than ${MAX_CHECK_FRAMES} deep`);
  if (depth > run.maxDepth) return new Failure(`nested deeper than ${run.maxDepth} levels`);
  const branches = node.anyOf;
  if (branches !== null) {
    // The branches are tried here, not in a function of their own: a chain of anyOf costs one stack frame a link.
    if (run.failedAnyOf !== null) {
      const known = recallAnyOfFailure(run.failedAnyOf, node, value, depth);
      if (known !== null) return known;
    }
    let best: Failure | null = null;
    for (const branch of branches) {
      const failure = checkNode(branch, value, depth, frames + 1, run);
      if (failure === null) return null;
      run.steps -= FAILED_BRANCH_STEPS;
      if (best === null || failure.reversed.length > best.reversed.length) best = failure;
    }
    // No branch matched: the failure that got furthest into the value says most about what was meant.
    if (best === null || best.reversed.length === 0) best = new Failure(`${describe(value, run)} matches none of the ${branches.length} "anyOf" schemas`);
    rememberAnyOfFailure(run, node, value, depth, best);
    return best;
  }
  const bit = typeBit(value);
  if (node.types !== 0 && (node.types & bit) === 0) return new Failure(`expected ${node.typeNames}, got ${describe(value, run)}`);
  const enumValues = node.enumValues;
  if (enumValues !== null) {
    // Each value compared is a step: an enum of 1,000 values costs 1,000 for every item of a long list.
    run.steps -= enumValues.length;
    if (run.steps < 0) throw new OutOfBounds(`more than ${run.budget} steps`);
    if (!enumValues.includes(value)) return new Failure(`${describe(value, run)} is not one of the enum values`);
  }
  if (node.hasConst && value !== node.constValue) return new Failure(`expected ${JSON.stringify(node.constValue)}, got ${describe(value, run)}`);
  switch (bit) {
    case Type.String: return checkString(node, value as string, run);
    case Type.Integer:
    case Type.Number: return checkNumber(node, value as number, run);
    case Type.Array: return checkArray(node, value as unknown[], depth, frames, run);
    case Type.Object: return checkObject(node, value as Record<string, unknown>, depth, frames, run);
    default: return null;
  }
}

/** The failure an anyOf node had on this value at this depth, as a fresh Failure, or null. */
function recallAnyOfFailure(failedAnyOf: Map<SchemaNode, Map<unknown, AnyOfFailure>>, node: SchemaNode, value: unknown, depth: number): Failure | null {
  const known = failedAnyOf.get(node)?.get(value);
  if (known === undefined || known.depth !== depth) return null;
  const failure = new Failure(known.text);
  for (const segment of known.reversed) failure.reversed.push(segment);
  return failure;
}

/** Remembers an anyOf node's failure on a value, so a definition shared by many branches is checked once per value. */
function rememberAnyOfFailure(run: CheckRun, node: SchemaNode, value: unknown, depth: number, failure: Failure): void {
  run.failedAnyOf ??= new Map();
  let failed = run.failedAnyOf.get(node);
  if (failed === undefined) {
    failed = new Map();
    run.failedAnyOf.set(node, failed);
  }
  failed.set(value, { depth, text: failure.text, reversed: failure.reversed.slice() });
}

function checkString(node: SchemaNode, text: string, run: CheckRun): Failure | null {
  const pattern = node.pattern;
  if (pattern !== null) {
    const result = pattern.test(text, run);
    if (result === Match.OutOfSteps) throw new OutOfBounds(`more than ${run.budget} steps`);
    if (result === Match.No) return new Failure(`${describe(text, run)} does not match the pattern ${JSON.stringify(pattern.source)}`);
  }
  if (node.format !== null && !node.format(text)) return new Failure(`${describe(text, run)} is not a valid ${node.formatName}`);
  return null;
}

function checkNumber(node: SchemaNode, n: number, run: CheckRun): Failure | null {
  if (n < node.minimum) return new Failure(`${shown(n, run)} is below the minimum ${node.minimum}`);
  if (n > node.maximum) return new Failure(`${shown(n, run)} is above the maximum ${node.maximum}`);
  if (n <= node.exclusiveMinimum) return new Failure(`${shown(n, run)} is not above the exclusive minimum ${node.exclusiveMinimum}`);
  if (n >= node.exclusiveMaximum) return new Failure(`${shown(n, run)} is not below the exclusive maximum ${node.exclusiveMaximum}`);
  if (node.multipleOf !== 0 && !isMultiple(n, node.multipleOf)) return new Failure(`${shown(n, run)} is not a multiple of ${node.multipleOf}`);
  return null;
}

/** A number as a bound's message names it: itself, or its kind when the run shows no values. */
function shown(n: number, run: CheckRun): string {
  return run.quiet ? kindOf(n) : String(n);
}

function checkArray(node: SchemaNode, list: unknown[], depth: number, frames: number, run: CheckRun): Failure | null {
  if (list.length < node.minItems) return new Failure(`has ${list.length} items, fewer than the minimum ${node.minItems}`);
  if (list.length > node.maxItems) return new Failure(`has ${list.length} items, more than the maximum ${node.maxItems}`);
  const items = node.items;
  if (items === null) return null;
  for (let i = 0; i < list.length; i++) {
    const failure = checkNode(items, list[i], depth + 1, frames + 1, run);
    if (failure !== null) {
      failure.reversed.push(i);
      return failure;
    }
  }
  return null;
}

function checkObject(node: SchemaNode, object: Record<string, unknown>, depth: number, frames: number, run: CheckRun): Failure | null {
  const names = node.propertyNames;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (!Object.hasOwn(object, name)) return new Failure(`missing the required property ${JSON.stringify(name)}`);
    const failure = checkNode(node.propertyNodes[i] as SchemaNode, object[name], depth + 1, frames + 1, run);
    if (failure !== null) {
      failure.reversed.push(name);
      return failure;
    }
  }
  // Every schema property is present, so any further own key is one the schema does not have.
  let keys = 0;
  for (const key in object) if (Object.hasOwn(object, key)) keys++;
  run.steps -= keys;
  if (run.steps < 0) throw new OutOfBounds(`more than ${run.budget} steps`);
  if (keys === names.length) return null;
  for (const key of Object.keys(object)) {
    if (!names.includes(key)) {
      // The key is the answer's text: a run that shows no values names the object that has it.
      if (run.quiet) return new Failure('has a property that is not in the schema ("additionalProperties": false)');
      const failure = new Failure('is not a property of the schema ("additionalProperties": false)');
      failure.reversed.push(key);
      return failure;
    }
  }
  return null;
}

function checkValue(root: SchemaNode, value: unknown, run: CheckRun): SchemaViolation | null {
  let failure: Failure | null;
  try {
    failure = checkNode(root, value, 0, 0, run);
  } catch (error) {
    if (!(error instanceof OutOfBounds)) throw error;
    failure = new Failure(`the answer could not be checked within the gateway's bounds (${error.text})`);
  }
  if (failure === null) return null;
  const path = renderPath(failure.reversed.reverse());
  return { path, message: `${path}: ${failure.text}` };
}

/**
 * Compiles a schema inside OpenAI's strict subset into a checker for parsed
 * JSON values. Throws StrictSchemaError when checkStrictSchema refuses it.
 */
export function compileSchema(schema: unknown, options: CompileOptions = {}): CompiledSchema {
  const problem = checkStrictSchema(schema, options.limits ?? DEFAULT_STRICT_SCHEMA_LIMITS);
  if (problem !== null) throw new StrictSchemaError(problem);
  const root = schema as Record<string, unknown>;
  const compiler = new SchemaCompiler(isPlainObject(root.$defs) ? root.$defs : {});
  const node = compiler.run(root);
  const maxDepth = options.maxValueDepth ?? DEFAULT_MAX_VALUE_DEPTH;
  const maxSteps = options.maxCheckSteps ?? DEFAULT_MAX_CHECK_STEPS;
  // One run per compiled schema, reset for each check: a check is synchronous, so two never overlap.
  const run = new CheckRun(maxSteps, maxDepth);
  return checker(node, run, maxSteps, false);
}

function checker(node: SchemaNode, run: CheckRun, maxSteps: number, quiet: boolean): CompiledSchema {
  let other: CompiledSchema | null = null;
  const self: CompiledSchema = {
    check: (value: unknown) => checkValue(node, value, run.reset(quiet)),
    checkCounted(value: unknown): { violation: SchemaViolation | null; steps: number } {
      const violation = checkValue(node, value, run.reset(quiet));
      return { violation, steps: maxSteps - run.steps };
    },
    get withoutValues(): CompiledSchema {
      if (quiet) return self;
      return (other ??= checker(node, run, maxSteps, true));
    },
  };
  return self;
}
