// The one error type of the release scripts: a refusal the releaser can act
// on. The CLIs print its message alone (no stack trace); anything else is a
// bug and keeps its stack.

export class ReleaseError extends Error {
  override readonly name = 'ReleaseError';
}
