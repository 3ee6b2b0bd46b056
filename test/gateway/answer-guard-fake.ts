// An answer guard with rules small enough to predict every event of a test:
// the word SECRET is masked as [SECRET_1] (logged, unchanged, in signed text),
// the word BLOCK is blocked; each channel holds back its last 5 characters
// (a word split over pushes is still whole when found). The door tests use it
// to pin the event shapes; the gateway tests use the real guard.
import type { AnswerChannel, AnswerGuard, ChannelKind } from '../../src/guard/answer-guard.ts';
import type { GuardFinding } from '../../src/guard/body-guard.ts';

const HOLD = 5;

export class FakeAnswerGuard implements AnswerGuard {
  /** Not scanning as the doors see it: the upstream's logprobs go as they came (a subclass says otherwise). */
  readonly scanning: boolean = false;
  readonly findings: GuardFinding[] = [];
  /** Channels made, by path, with their kind: what the door asked for. */
  readonly channels: string[] = [];

  channel(path: string, kind: ChannelKind): AnswerChannel {
    this.channels.push(`${path}:${kind}`);
    return new FakeChannel(path, kind, this.findings);
  }

  whole(path: string, kind: ChannelKind, text: string): { readonly text: string; readonly blocked: boolean } {
    const channel = new FakeChannel(path, kind, this.findings);
    const out = channel.push(text) + channel.end();
    return { text: out, blocked: channel.blocked };
  }

  drain(): GuardFinding[] {
    return this.findings.splice(0);
  }
}

class FakeChannel implements AnswerChannel {
  readonly #path: string;
  readonly #kind: ChannelKind;
  readonly #findings: GuardFinding[];
  #held = '';
  blocked = false;

  constructor(path: string, kind: ChannelKind, findings: GuardFinding[]) {
    this.#path = path;
    this.#kind = kind;
    this.#findings = findings;
  }

  push(text: string): string {
    if (this.blocked) return '';
    this.#held += text;
    const out = this.#scan();
    if (this.blocked) return out;
    const keep = Math.min(HOLD, this.#held.length);
    const given = out + this.#held.slice(0, this.#held.length - keep);
    this.#held = this.#held.slice(this.#held.length - keep);
    return given;
  }

  end(): string {
    if (this.blocked) return '';
    const out = this.#scan() + this.#held;
    this.#held = '';
    return out;
  }

  /** Whole words out of the held text: what precedes and replaces them. */
  #scan(): string {
    let out = '';
    for (;;) {
      const secret = this.#held.indexOf('SECRET');
      const block = this.#held.indexOf('BLOCK');
      if (block !== -1 && (secret === -1 || block < secret)) {
        this.#findings.push({ detector: 'block_word', path: this.#path, action: 'block' });
        out += this.#held.slice(0, block);
        this.#held = '';
        this.blocked = true;
        return out;
      }
      if (secret === -1) return out;
      const signed = this.#kind === 'signed';
      this.#findings.push({ detector: 'secret_word', path: this.#path, action: signed ? 'log' : 'mask' });
      out += this.#held.slice(0, secret) + (signed ? 'SECRET' : '[SECRET_1]');
      this.#held = this.#held.slice(secret + 'SECRET'.length);
    }
  }
}
