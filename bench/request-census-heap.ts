// What a V8 heap snapshot (v8.writeHeapSnapshot) holds, summed by node type:
// how many function objects ("closure"), objects, strings and bytes (self
// sizes) are live. A snapshot is taken after a full garbage collection, so the
// difference between two of them is what stayed reachable in between.

import { readFileSync } from 'node:fs';

export interface HeapCensus {
  closures: number;
  objects: number;
  strings: number;
  /** The sum of every node's self size. */
  bytes: number;
}

interface SnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
}

const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string']);

export function readHeapCensus(file: string): HeapCensus {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as SnapshotFile;
  const fields = snapshot.snapshot.meta.node_fields;
  const typeNames = snapshot.snapshot.meta.node_types[0];
  const typeAt = fields.indexOf('type');
  const sizeAt = fields.indexOf('self_size');
  if (typeAt < 0 || sizeAt < 0) throw new Error(`${file}: a heap snapshot without node types or sizes`);
  const census: HeapCensus = { closures: 0, objects: 0, strings: 0, bytes: 0 };
  const nodes = snapshot.nodes;
  for (let i = 0; i < nodes.length; i += fields.length) {
    const type = typeNames[nodes[i + typeAt] as number];
    census.bytes += nodes[i + sizeAt] as number;
    if (type === 'closure') census.closures++;
    else if (type === 'object') census.objects++;
    else if (type !== undefined && STRING_TYPES.has(type)) census.strings++;
  }
  return census;
}

/** (during - before) / count, field by field. */
export function heapPerRequest(before: HeapCensus, during: HeapCensus, count: number): HeapCensus {
  return {
    closures: (during.closures - before.closures) / count,
    objects: (during.objects - before.objects) / count,
    strings: (during.strings - before.strings) / count,
    bytes: (during.bytes - before.bytes) / count,
  };
}
