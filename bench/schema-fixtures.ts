// The schemas the structured-outputs benchmarks share: `count` properties
// mixing strings, integers with bounds, enums, nullable numbers, arrays and a
// nested object with a formatted string, and a value that passes.

export type Schema = Record<string, unknown>;

export const object = (properties: Record<string, unknown>): Schema => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });

/** Property i of a schema and a value that passes it; the kinds take turns. */
function property(i: number): [Schema, unknown] {
  switch (i % 6) {
    case 0: return [{ type: 'string', description: `field ${i}` }, `text for field ${i}, with a few more words in it`];
    case 1: return [{ type: 'integer', minimum: 0, maximum: 1000 }, i];
    case 2: return [{ type: 'string', enum: ['low', 'medium', 'high'] }, 'medium'];
    case 3: return [{ type: ['number', 'null'] }, i % 4 === 0 ? null : i / 7];
    case 4: return [{ type: 'array', items: { type: 'string' }, maxItems: 8 }, ['a', 'b', 'c']];
    default: return [object({ id: { type: 'string', format: 'uuid' }, score: { type: 'number' } }), { id: '123e4567-e89b-12d3-a456-426614174000', score: 0.5 }];
  }
}

export function schemaFixture(count: number): { schema: Schema; passing: Record<string, unknown> } {
  const properties: Record<string, unknown> = {};
  const passing: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const [schema, value] = property(i);
    properties[`field_${i}`] = schema;
    passing[`field_${i}`] = value;
  }
  return { schema: object(properties), passing };
}
