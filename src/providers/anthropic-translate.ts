// Translation between OpenAI's chat-completions shapes and Anthropic's Messages
// API, both ways, as pure functions: the request (./anthropic-request.ts), the
// non-stream response (./anthropic-response.ts) and the stream events
// (./anthropic-stream.ts). The fetch exchange lives in ./anthropic.ts.

export {
  type AnthropicContentBlock,
  type AnthropicMessage,
  type AnthropicRequest,
  type AnthropicTextBlock,
  type AnthropicTool,
  type AnthropicToolChoice,
  toAnthropicRequest,
} from './anthropic-request.ts';
export { ENCODED_ID_PREFIX, fromAnthropicToolId, toAnthropicToolId } from './anthropic-tool-ids.ts';
export { finishReasonOf, fromAnthropicResponse, toUsage, type AnthropicTokenCounts } from './anthropic-response.ts';
export {
  type AnthropicStreamEvent,
  type AnthropicStreamTranslator,
  type AnthropicStreamTranslatorOptions,
  createAnthropicStreamTranslator,
} from './anthropic-stream.ts';
