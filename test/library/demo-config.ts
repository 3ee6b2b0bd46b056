// The smallest config an embedded gateway serves, shared by the library's tests: the demo
// provider behind service-chat, no admin listener (a test binds only what it asks for).
import { createLogger, type LevelledLogger } from '../../src/log/logger.ts';

export const DEMO = {
  admin: { enabled: false },
  providers: { demo: { type: 'demo' } },
  aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } },
  auto: { default: 'service-chat' },
};

/** A logger that writes nothing. */
export const quietLogger = (): LevelledLogger => createLogger({ write: () => {} });
