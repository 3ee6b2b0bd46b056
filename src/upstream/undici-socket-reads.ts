// Backpressure for built-in fetch on Node 20 (undici 6). When the gateway
// stops reading a response body (its client's socket is full), undici 6
// pauses its HTTP parser, but each time the body is read again it takes the
// socket's whole read buffer at once (`socket.read()`), which empties the
// buffer and so starts a new read from the kernel, then puts back what the
// paused parser did not use (`socket.unshift`). Every read of the body thus
// adds one more kernel read to the buffer and copies all of it: measured, a
// stream whose client took 4 MB left 11 MB in the gateway's upstream socket,
// and a client that keeps reading slowly makes it grow without bound. Node 22
// and later (undici 7) keep that buffer at its high-water mark.
//
// The remedy, for undici 6 only: that socket's argument-less read() hands out
// at most one high-water mark of bytes. Readable.read(n) with n below the
// buffered length reads from the kernel only once the buffer falls below the
// mark, so the buffer stays bounded and the upstream's own socket fills. The
// bytes and their order are unchanged: undici parses what it is given.

const UNDICI_MAJOR = Number((process.versions as Record<string, string | undefined>)['undici']?.split('.')[0] ?? 0);
/** Whether the Node running has undici 6's unbounded reads. */
export const UNDICI_READS_UNBOUNDED = UNDICI_MAJOR === 6;

interface ReadableSocket {
  read(size?: number): unknown;
  readonly readableLength: number;
  readonly readableHighWaterMark: number;
}

const bounded = new WeakSet<object>();

/** Bounds what undici 6 reads from `socket` at once; does nothing on other versions or twice. */
export function boundUndiciSocketReads(socket: object | undefined): void {
  if (!UNDICI_READS_UNBOUNDED || socket === undefined || bounded.has(socket)) return;
  const target = socket as ReadableSocket;
  if (typeof target.read !== 'function' || typeof target.readableHighWaterMark !== 'number') return;
  bounded.add(socket);
  const read = target.read;
  target.read = function boundedRead(this: ReadableSocket, size?: number): unknown {
    if (size !== undefined) return read.call(this, size);
    const length = this.readableLength;
    // Nothing buffered: the plain call, which asks the kernel for more.
    if (length === 0) return read.call(this);
    return read.call(this, Math.min(length, this.readableHighWaterMark));
  };
}
