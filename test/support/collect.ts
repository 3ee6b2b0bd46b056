// Reading what code under test produces, to its end.
import { Writable } from 'node:stream';

/** Every item of an async iterable, in order. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/**
 * A writable that keeps what is written to it (a command's stdout or stderr),
 * read back as UTF-8; `onWrite` sees each write as it comes (a fake terminal
 * answering a prompt).
 */
export function sink(onWrite?: (text: string) => void): { stream: Writable; text(): string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      onWrite?.(Buffer.from(chunk).toString('utf8'));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}
