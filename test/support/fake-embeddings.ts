// A fake OpenAI embeddings upstream's answers, made independently of the
// gateway's own codec: each input's vector is a fixed function of its text (or
// token ids) and the width, every value a float32; base64 is written with
// Buffer.writeFloatLE, as OpenAI defines it (little-endian float32).

/** The float32 values of one input's vector (as doubles, each exactly a float32). */
export function fakeVector(input: string | readonly number[], width: number): number[] {
  const text = typeof input === 'string' ? input : input.join(',');
  let seed = 2166136261;
  for (let i = 0; i < text.length; i++) seed = Math.imul(seed ^ text.charCodeAt(i), 16777619) >>> 0;
  const values: number[] = [];
  for (let j = 0; j < width; j++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    // Values of every magnitude a model answers, with many significant bits.
    values.push(Math.fround(((seed / 4294967296) * 2 - 1) / (1 + (j % 7))));
  }
  return values;
}

/** OpenAI's base64 of a float32 vector: little-endian bytes. */
export function base64Of(values: readonly number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString('base64');
}

/** The float32 values a base64 vector holds, as doubles. */
export function valuesOf(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  const values: number[] = [];
  for (let i = 0; i < bytes.length; i += 4) values.push(bytes.readFloatLE(i));
  return values;
}

export interface FakeEmbeddingsOptions {
  /** Vector width; default 8. */
  width?: number;
  /** Answer in this encoding whatever was asked; default the request's encoding_format (float when absent). */
  encoding?: 'float' | 'base64';
  /** Usage prompt tokens per input; default 3. null: no usage in the answer. */
  tokensPerInput?: number | null;
  /** Reverses the order of `data` (indices still right). */
  shuffle?: boolean;
}

/** The upstream's answer to an embeddings request body, as OpenAI shapes it. */
export function fakeEmbeddingsAnswer(body: { model: string; input: unknown; encoding_format?: string; dimensions?: number }, options: FakeEmbeddingsOptions = {}): Record<string, unknown> {
  const inputs = inputList(body.input);
  const width = body.dimensions ?? options.width ?? 8;
  const encoding = options.encoding ?? (body.encoding_format === 'base64' ? 'base64' : 'float');
  const data = inputs.map((input, index) => {
    const values = fakeVector(input, width);
    return { object: 'embedding', index, embedding: encoding === 'base64' ? base64Of(values) : values };
  });
  if (options.shuffle === true) data.reverse();
  const tokens = options.tokensPerInput === undefined ? 3 : options.tokensPerInput;
  return {
    object: 'list',
    data,
    model: body.model,
    ...(tokens === null ? {} : { usage: { prompt_tokens: tokens * inputs.length, total_tokens: tokens * inputs.length } }),
  };
}

/** A request's `input` as a list of inputs (a string or a token list are one). */
export function inputList(input: unknown): Array<string | number[]> {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input)) throw new TypeError('input is neither a string nor an array');
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as Array<string | number[]>;
}
