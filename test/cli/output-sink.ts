// A writable that keeps what the command under test writes (its stdout or
// stderr), read back as UTF-8 once the command is done.
import { Writable } from 'node:stream';

export function sink(): { stream: Writable; text(): string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}
