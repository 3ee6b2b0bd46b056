// The compiled form of a strict schema (./compile.ts): one node per
// subschema with its keywords as fields, every `$ref` linked to the node it
// names, patterns compiled for the linear-time matcher. Nodes are created when
// first named and filled later from a worklist, so compiling follows `$ref`s
// and nested subschemas without recursion.

import { compileLinearPattern, type LinearPattern } from './pattern-match.ts';
import { isPlainObject, refTarget } from './strict-schema.ts';
import { STRING_FORMATS } from './string-formats.ts';

export const Type = { Null: 1, Boolean: 2, Integer: 4, Number: 8, String: 16, Array: 32, Object: 64 } as const;
const TYPE_BITS: Readonly<Record<string, number>> = {
  null: Type.Null,
  boolean: Type.Boolean,
  integer: Type.Integer,
  number: Type.Number | Type.Integer,
  string: Type.String,
  array: Type.Array,
  object: Type.Object,
};

/** One subschema, keywords as fields (every node has every field, so property reads stay monomorphic). */
export class SchemaNode {
  /** Bits of Type the value may have; 0 when the schema gives no type (enum or const alone). */
  types = 0;
  typeNames = '';
  anyOf: SchemaNode[] | null = null;
  enumValues: readonly unknown[] | null = null;
  hasConst = false;
  constValue: unknown = null;
  propertyNames: string[] = [];
  propertyNodes: SchemaNode[] = [];
  items: SchemaNode | null = null;
  minItems = 0;
  maxItems = Infinity;
  pattern: LinearPattern | null = null;
  format: ((text: string) => boolean) | null = null;
  formatName = '';
  minimum = -Infinity;
  maximum = Infinity;
  exclusiveMinimum = -Infinity;
  exclusiveMaximum = Infinity;
  multipleOf = 0;
}

/**
 * Nodes are created when first named and filled later from a worklist, so
 * compiling follows `$ref`s and nested subschemas without recursion.
 */
export class SchemaCompiler {
  readonly defs: Record<string, unknown>;
  readonly root = new SchemaNode();
  readonly defNodes = new Map<string, SchemaNode>();
  readonly pendingNodes: SchemaNode[] = [];
  readonly pendingSchemas: Record<string, unknown>[] = [];

  constructor(defs: Record<string, unknown>) {
    this.defs = defs;
  }

  /** The node a `$ref` names; a definition that is itself a `$ref` stands for its target (checkStrictSchema refused cycles). */
  target(ref: string): SchemaNode {
    let name = refTarget(ref);
    while (name !== null) {
      const def = this.defs[name] as Record<string, unknown>;
      if (typeof def.$ref !== 'string') break;
      name = refTarget(def.$ref);
    }
    if (name === null) return this.root;
    let node = this.defNodes.get(name);
    if (node === undefined) {
      node = new SchemaNode();
      this.defNodes.set(name, node);
      this.later(node, this.defs[name] as Record<string, unknown>);
    }
    return node;
  }

  /** The node for a subschema, to be filled by run(). */
  compile(schema: Record<string, unknown>): SchemaNode {
    if (typeof schema.$ref === 'string') return this.target(schema.$ref);
    const node = new SchemaNode();
    this.later(node, schema);
    return node;
  }

  later(node: SchemaNode, schema: Record<string, unknown>): void {
    this.pendingNodes.push(node);
    this.pendingSchemas.push(schema);
  }

  /** Fills nodes until none is waiting; returns the root. */
  run(root: Record<string, unknown>): SchemaNode {
    this.later(this.root, root);
    for (;;) {
      const node = this.pendingNodes.pop();
      if (node === undefined) return this.root;
      this.fill(node, this.pendingSchemas.pop() as Record<string, unknown>);
    }
  }

  fill(node: SchemaNode, schema: Record<string, unknown>): void {
    if (Array.isArray(schema.anyOf)) {
      node.anyOf = schema.anyOf.map((branch) => this.compile(branch as Record<string, unknown>));
      return;
    }
    if (schema.type !== undefined) {
      const names = (Array.isArray(schema.type) ? schema.type : [schema.type]) as string[];
      for (const name of names) node.types |= TYPE_BITS[name] as number;
      node.typeNames = names.join(' or ');
    }
    if (Array.isArray(schema.enum)) node.enumValues = schema.enum;
    if ('const' in schema) {
      node.hasConst = true;
      node.constValue = schema.const;
    }
    if (isPlainObject(schema.properties)) {
      for (const [name, child] of Object.entries(schema.properties)) {
        node.propertyNames.push(name);
        node.propertyNodes.push(this.compile(child as Record<string, unknown>));
      }
    }
    if (isPlainObject(schema.items)) node.items = this.compile(schema.items);
    if (typeof schema.minItems === 'number') node.minItems = schema.minItems;
    if (typeof schema.maxItems === 'number') node.maxItems = schema.maxItems;
    // checkStrictSchema refused a pattern the linear-time matcher does not run.
    if (typeof schema.pattern === 'string') node.pattern = compileLinearPattern(schema.pattern) as LinearPattern;
    if (typeof schema.format === 'string') {
      node.format = STRING_FORMATS[schema.format] ?? null;
      node.formatName = schema.format;
    }
    if (typeof schema.minimum === 'number') node.minimum = schema.minimum;
    if (typeof schema.maximum === 'number') node.maximum = schema.maximum;
    if (typeof schema.exclusiveMinimum === 'number') node.exclusiveMinimum = schema.exclusiveMinimum;
    if (typeof schema.exclusiveMaximum === 'number') node.exclusiveMaximum = schema.exclusiveMaximum;
    if (typeof schema.multipleOf === 'number') node.multipleOf = schema.multipleOf;
  }
}

