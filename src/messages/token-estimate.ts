// The gateway's own estimate of a Messages request's input tokens, for
// count_tokens when the upstream cannot count (docs/config.md, "Token
// counting"). Pure and generic: it walks the validated body as plain data,
// so a block type it does not know is still counted (by its strings), never
// skipped. Every part the model reads counts: the system prompt, every
// message's text, tool_use inputs (as JSON), tool results, thinking text,
// documents, images, the tool definitions and tool_choice, plus fixed
// overheads per request, per message, per tool and for the tool-use system
// prompt Anthropic adds when tools are present.
//
// Text is counted by weight: an ASCII character weighs 1, any other UTF-16
// code unit NON_ASCII_WEIGHT (letters outside ASCII cost a token or more each
// in the tokenizers measured); the tokens are ceil(weight / CHARS_PER_TOKEN).
// Linear in the body: each value is visited once (an explicit stack, no
// recursion), and an image costs a header read of a few bytes.
// Images: https://platform.claude.com/docs/en/build-with-claude/vision
// ("tokens = (width px * height px)/750", long edge scaled to 1568 px,
// about 1,600 tokens at most). Tool-use system prompt:
// https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview (pricing table).
import { imageDimensions } from './image-dimensions.ts';

/** Weighted characters per token. Claude Code's own requests (prose, code, JSON schemas) measure
 * 4.1 to 4.3 characters per token with the legacy Claude tokenizer and cl100k; Anthropic's current
 * tokenizers take 1.1 to 1.35 times as many tokens, so 3.5 errs towards counting more, never less. */
export const CHARS_PER_TOKEN = 3.5;
/** What one non-ASCII UTF-16 code unit weighs, in ASCII characters. */
export const NON_ASCII_WEIGHT = 3;
/** Every request: the turn markers around the conversation. */
export const REQUEST_TOKENS = 7;
/** Every message (and the system prompt): its role and separators. */
export const MESSAGE_TOKENS = 3;
/** Every content block beyond the text it carries. */
export const BLOCK_TOKENS = 1;
/** Every tool definition beyond its name, description and schema. */
export const TOOL_TOKENS = 4;
/** The system prompt Anthropic adds when tools are present, for tool_choice auto or none (Claude 4 models). */
export const TOOL_SYSTEM_TOKENS_AUTO = 346;
/** The same, for tool_choice any or tool. */
export const TOOL_SYSTEM_TOKENS_FORCED = 313;
/** Long edge an image is scaled down to before it is counted. */
export const IMAGE_MAX_EDGE = 1568;
/** Pixels per token. */
export const IMAGE_PIXELS_PER_TOKEN = 750;
/** The most one image costs; also the cost of an image whose size cannot be read (a URL, an unknown format). */
export const IMAGE_MAX_TOKENS = 1600;
/** One PDF page: its text (Anthropic: 1,500 to 3,000 tokens) and its page image. */
export const PDF_PAGE_TOKENS = 3000;
/** Bytes per page assumed for a PDF whose page objects cannot be seen (compressed object streams). */
export const PDF_BYTES_PER_PAGE = 100 * 1024;

interface Tally {
  /** Weighted characters of text. */
  weight: number;
  /** Tokens fixed by rule (overheads, images, documents). */
  tokens: number;
}

type Json = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const LAST_ASCII = 0x7f;
const SPACE = 0x20;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const LOWER_S = 0x73;

/** Weighted length of `text`: ASCII 1, other code units NON_ASCII_WEIGHT. */
export function textWeight(text: string): number {
  let nonAscii = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > LAST_ASCII) nonAscii++;
  return text.length + nonAscii * (NON_ASCII_WEIGHT - 1);
}

function addText(tally: Tally, text: unknown): void {
  if (typeof text === 'string') tally.weight += textWeight(text);
}

/** A value's JSON text, weighed (tool inputs, schemas, tool_choice); nothing for what JSON cannot write. */
function addJson(tally: Tally, value: unknown): void {
  if (value === undefined) return;
  const text = JSON.stringify(value) as string | undefined;
  if (text !== undefined) tally.weight += textWeight(text);
}

/**
 * Every string inside `value` (keys not counted), for block types the walk
 * does not know: iterative, each value visited once.
 */
function addStrings(tally: Tally, value: unknown): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') tally.weight += textWeight(item);
    else if (Array.isArray(item)) for (const element of item) stack.push(element);
    else if (isObject(item)) {
      for (const key in item) {
        // Opaque to the model: signatures, cache markers and citations' bookkeeping.
        if (key === 'type' || key === 'signature' || key === 'cache_control' || key === 'id' || key === 'tool_use_id') continue;
        stack.push(item[key]);
      }
    }
  }
}

/** Tokens of one image by Anthropic's rule: scaled to fit IMAGE_MAX_EDGE, width*height/750, at most IMAGE_MAX_TOKENS. */
export function imageTokens(width: number, height: number): number {
  const longEdge = Math.max(width, height);
  const scale = longEdge > IMAGE_MAX_EDGE ? IMAGE_MAX_EDGE / longEdge : 1;
  const tokens = Math.ceil((width * scale * (height * scale)) / IMAGE_PIXELS_PER_TOKEN);
  return Math.max(1, Math.min(IMAGE_MAX_TOKENS, tokens));
}

function imageSourceTokens(source: unknown): number {
  if (!isObject(source) || source['type'] !== 'base64' || typeof source['data'] !== 'string') return IMAGE_MAX_TOKENS;
  const size = imageDimensions(source['data']);
  return size === null ? IMAGE_MAX_TOKENS : imageTokens(size.width, size.height);
}

/** Pages of a base64 PDF: its `/Type /Page` objects, or by size when they are compressed out of sight. */
export function pdfPages(base64: string): number {
  const bytes = Buffer.from(base64, 'base64');
  let pages = 0;
  let at = bytes.indexOf('/Type');
  while (at !== -1) {
    let i = at + 5;
    while (i < bytes.length && (bytes[i] === SPACE || bytes[i] === LINE_FEED || bytes[i] === CARRIAGE_RETURN)) i++;
    // "/Page" but not "/Pages".
    if (bytes.toString('latin1', i, i + 5) === '/Page' && bytes[i + 5] !== LOWER_S) pages++;
    at = bytes.indexOf('/Type', i);
  }
  return pages > 0 ? pages : Math.max(1, Math.ceil(bytes.length / PDF_BYTES_PER_PAGE));
}

function addDocument(tally: Tally, block: Json): void {
  addText(tally, block['title']);
  addText(tally, block['context']);
  const source = block['source'];
  if (!isObject(source)) return;
  const type = source['type'];
  if (type === 'text') addText(tally, source['data']);
  else if (type === 'content') addBlocks(tally, source['content']);
  else if (type === 'base64' && typeof source['data'] === 'string') {
    if (source['media_type'] === 'application/pdf') tally.tokens += pdfPages(source['data']) * PDF_PAGE_TOKENS;
    // A plain-text document sent as base64 is read as its text.
    else addText(tally, Buffer.from(source['data'], 'base64').toString('utf8'));
  } else if (type === 'image') tally.tokens += imageSourceTokens(source);
  // A URL or a file id: the pages are not known here; counted as one page.
  else tally.tokens += PDF_PAGE_TOKENS;
}

/** A message's (or a tool result's) content: a string or blocks. */
function addBlocks(tally: Tally, content: unknown): void {
  if (typeof content === 'string') {
    addText(tally, content);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (!isObject(block)) continue;
    tally.tokens += BLOCK_TOKENS;
    switch (block['type']) {
      case 'text':
        addText(tally, block['text']);
        break;
      case 'image':
        tally.tokens += imageSourceTokens(block['source']);
        break;
      case 'document':
        addDocument(tally, block);
        break;
      case 'tool_use':
      case 'server_tool_use':
        addText(tally, block['name']);
        addJson(tally, block['input']);
        break;
      case 'tool_result':
        addBlocks(tally, block['content']);
        break;
      case 'thinking':
        addText(tally, block['thinking']);
        break;
      case 'redacted_thinking':
        // Encrypted: what it holds is not known here; its length is the only measure.
        addText(tally, block['data']);
        break;
      default:
        addStrings(tally, block);
    }
  }
}

/** Whether tool_choice forces a tool (any or a named tool): the shorter tool-use system prompt. */
function forcesTool(toolChoice: unknown): boolean {
  return isObject(toolChoice) && (toolChoice['type'] === 'any' || toolChoice['type'] === 'tool');
}

function addTools(tally: Tally, tools: unknown, toolChoice: unknown): void {
  if (!Array.isArray(tools) || tools.length === 0) return;
  let loaded = 0;
  for (const tool of tools) {
    if (!isObject(tool)) continue;
    tally.tokens += TOOL_TOKENS;
    addText(tally, tool['name']);
    // A deferred tool stays out of the prompt until a tool search loads it: only its name is counted.
    if (tool['defer_loading'] === true) continue;
    loaded++;
    if (tool['input_schema'] !== undefined || tool['description'] !== undefined) {
      addText(tally, tool['description']);
      addJson(tally, tool['input_schema']);
    } else {
      // A server tool (web search, code execution, ...): its settings as written.
      addStrings(tally, tool);
    }
  }
  if (loaded > 0) tally.tokens += forcesTool(toolChoice) ? TOOL_SYSTEM_TOKENS_FORCED : TOOL_SYSTEM_TOKENS_AUTO;
  addJson(tally, toolChoice);
}

/**
 * The estimated input tokens of a validated Messages (or count_tokens) body:
 * never 0 (the request overhead alone is REQUEST_TOKENS).
 */
export function estimateMessageTokens(body: Json): number {
  const tally: Tally = { weight: 0, tokens: REQUEST_TOKENS };
  const system = body['system'];
  if (system !== undefined) {
    tally.tokens += MESSAGE_TOKENS;
    addBlocks(tally, system);
  }
  const messages = body['messages'];
  if (Array.isArray(messages)) {
    for (const message of messages) {
      if (!isObject(message)) continue;
      tally.tokens += MESSAGE_TOKENS;
      addBlocks(tally, message['content']);
    }
  }
  addTools(tally, body['tools'], body['tool_choice']);
  // Remote MCP servers' definitions are the upstream's to fetch; their settings are what is known here.
  if (body['mcp_servers'] !== undefined) addStrings(tally, body['mcp_servers']);
  return tally.tokens + Math.ceil(tally.weight / CHARS_PER_TOKEN);
}

/** The estimate's part for tool definitions alone (with the tool-use system prompt). */
export function estimateToolTokens(body: Json): number {
  const tally: Tally = { weight: 0, tokens: 0 };
  addTools(tally, body['tools'], body['tool_choice']);
  return tally.tokens + Math.ceil(tally.weight / CHARS_PER_TOKEN);
}
