// A repeatable random source for the secret generators' `random` option:
// SHA-256 of a seed and a counter, so a failing draw can be replayed.
import { createHash } from 'node:crypto';

export function seededRandom(seed: string): (size: number) => Buffer {
  let counter = 0;
  return (size) => {
    const blocks: Buffer[] = [];
    for (let have = 0; have < size; have += 32) blocks.push(createHash('sha256').update(`${seed}:${counter++}`).digest());
    return Buffer.concat(blocks).subarray(0, size);
  };
}
