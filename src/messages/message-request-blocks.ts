// The content blocks of a Messages request, as data: for each block `type`,
// the fields it takes and how each is checked (./message-request-checks.ts).
// Field sets follow ContentBlockParam and BetaContentBlockParam of
// @anthropic-ai/sdk 1.14 (see ./message-request-types.ts for the sources).
//
// Blocks the gateway translates (text, image, document, search_result,
// thinking, redacted_thinking, tool_use, tool_result, tool_reference) are
// checked down to their leaves. The blocks only an Anthropic upstream
// understands (server_tool_use, the server tools' *_tool_result, MCP,
// compaction, ...) are checked for their fields and the kind of each; the
// inside of their `content` is the upstream's to check, since the gateway
// never reads it.
import {
  anyJson,
  arrayOf,
  boolean,
  checkFields,
  fail,
  isObject,
  listQuoted,
  nonEmptyString,
  nullable,
  object,
  objectShape,
  oneOf,
  shaped,
  string,
  stringOr,
  echo,
  where,
  wrongType,
  type Check,
  type ObjectShape,
} from './message-request-checks.ts';

/** Generous bound on citations of one text block; the body's byte limit bounds the rest. */
const MAX_CITATIONS = 10_000;
/** Bound on the blocks of one message or tool result, for the same reason. */
export const MAX_BLOCKS = 100_000;

const CACHE_CONTROL_SHAPE = objectShape('a cache_control', { type: oneOf(['ephemeral']) }, { ttl: oneOf(['5m', '1h']) });
export const cacheControl: Check = nullable(shaped(CACHE_CONTROL_SHAPE));

const CITATION_TYPES = ['char_location', 'page_location', 'content_block_location', 'web_search_result_location', 'search_result_location'];
const citationType = oneOf(CITATION_TYPES);
/** A citation Claude produced, echoed back: its `type` is checked, its locations are the upstream's. */
const citation: Check = (value, at) => {
  if (!isObject(value)) wrongType(at, 'an object', value);
  at.push('type');
  if (value['type'] === undefined) fail(at, 'missing_required_parameter', `Missing required field ${where(at)}.`);
  citationType(value['type'], at);
  at.pop();
};

const citationsConfig = shaped(objectShape('a citations setting', {}, { enabled: boolean }));

/**
 * A block whose shape depends on its `type`: the type is checked first (a
 * missing or unknown one names what is accepted here), then the fields.
 */
export function typed(shapes: ReadonlyMap<string, ObjectShape>, here: string): Check {
  const accepted = listQuoted([...shapes.keys()]);
  return (value, at) => {
    if (!isObject(value)) wrongType(at, 'an object', value);
    const type = value['type'];
    if (type === undefined) {
      at.push('type');
      fail(at, 'missing_required_parameter', `Missing required field ${where(at)}. Accepted in ${here}: ${accepted}.`);
    }
    if (typeof type !== 'string') {
      at.push('type');
      wrongType(at, 'a string', type);
    }
    const shape = shapes.get(type);
    if (shape === undefined) {
      at.push('type');
      fail(at, 'invalid_value', `Invalid value for ${where(at)}: '${echo(type)}' is not accepted in ${here}. Accepted: ${accepted}.`);
    }
    checkFields(value, shape, at);
  };
}

function shapes(entries: Array<[string, ObjectShape]>): ReadonlyMap<string, ObjectShape> {
  return new Map(entries);
}

const TYPE = { type: string };

/** Anthropic refuses an empty text block anywhere ("text content blocks must be non-empty"). */
export const TEXT_BLOCK = objectShape('a text block', { ...TYPE, text: nonEmptyString }, { cache_control: cacheControl, citations: nullable(arrayOf(citation, MAX_CITATIONS)) });

const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
const imageSource = typed(
  shapes([
    ['base64', objectShape('a base64 image source', { ...TYPE, media_type: oneOf(IMAGE_MEDIA_TYPES), data: nonEmptyString })],
    ['url', objectShape('a url image source', { ...TYPE, url: nonEmptyString })],
    ['file', objectShape('a file image source', { ...TYPE, file_id: nonEmptyString })],
  ]),
  'an image source',
);
export const IMAGE_BLOCK = objectShape(
  'an image block',
  { ...TYPE, source: imageSource },
  { cache_control: cacheControl, transformations: nullable(shaped(objectShape('an image transformations setting', {}, { oversized_image: oneOf(['downsize', 'error']) }))) },
);

const sourceContent = stringOr(arrayOf(typed(shapes([['text', TEXT_BLOCK], ['image', IMAGE_BLOCK]]), 'a document content source'), MAX_BLOCKS));
const documentSource = typed(
  shapes([
    ['base64', objectShape('a base64 document source', { ...TYPE, media_type: oneOf(['application/pdf']), data: nonEmptyString })],
    ['text', objectShape('a text document source', { ...TYPE, media_type: oneOf(['text/plain']), data: string })],
    ['content', objectShape('a content document source', { ...TYPE, content: sourceContent })],
    ['url', objectShape('a url document source', { ...TYPE, url: nonEmptyString })],
    ['file', objectShape('a file document source', { ...TYPE, file_id: nonEmptyString })],
  ]),
  'a document source',
);
export const DOCUMENT_BLOCK = objectShape(
  'a document block',
  { ...TYPE, source: documentSource },
  { cache_control: cacheControl, citations: nullable(citationsConfig), context: nullable(string), title: nullable(string) },
);

export const SEARCH_RESULT_BLOCK = objectShape(
  'a search_result block',
  { ...TYPE, source: string, title: string, content: arrayOf(typed(shapes([['text', TEXT_BLOCK]]), 'search_result content'), MAX_BLOCKS) },
  { cache_control: cacheControl, citations: citationsConfig },
);

const THINKING_BLOCK = objectShape('a thinking block', { ...TYPE, thinking: string, signature: string });
const REDACTED_THINKING_BLOCK = objectShape('a redacted_thinking block', { ...TYPE, data: string });
const caller = object;

export const TOOL_USE_BLOCK = objectShape(
  'a tool_use block',
  { ...TYPE, id: nonEmptyString, name: nonEmptyString, input: object },
  { cache_control: cacheControl, caller, toolset_name: nullable(string) },
);
const TOOL_REFERENCE_BLOCK = objectShape('a tool_reference block', { ...TYPE, tool_name: nonEmptyString }, { cache_control: cacheControl });
const BROWSER_STATE_BLOCK = objectShape('a browser_state block', { ...TYPE }, { cache_control: cacheControl, screenshot: anyJson, tabs: anyJson, url: anyJson, title: anyJson });

const toolResultContent = stringOr(
  arrayOf(
    typed(
      shapes([
        ['text', TEXT_BLOCK],
        ['image', IMAGE_BLOCK],
        ['search_result', SEARCH_RESULT_BLOCK],
        ['document', DOCUMENT_BLOCK],
        ['tool_reference', TOOL_REFERENCE_BLOCK],
        ['browser_state', BROWSER_STATE_BLOCK],
      ]),
      'tool_result content',
    ),
    MAX_BLOCKS,
  ),
);
export const TOOL_RESULT_BLOCK = objectShape(
  'a tool_result block',
  { ...TYPE, tool_use_id: nonEmptyString },
  { content: toolResultContent, is_error: boolean, cache_control: cacheControl, toolset_name: nullable(string) },
);

/** A server tool's result: its `content` is the upstream's to check. */
function serverResult(name: string): ObjectShape {
  return objectShape(`a ${name} block`, { ...TYPE, tool_use_id: nonEmptyString, content: anyJson }, { cache_control: cacheControl, caller });
}

const textOnly = stringOr(arrayOf(typed(shapes([['text', TEXT_BLOCK]]), 'mcp_tool_result content'), MAX_BLOCKS));
const toolChange = shaped(objectShape('a tool change', {}, { ...TYPE, tool: object, cache_control: cacheControl }));

/** Blocks that only an Anthropic upstream understands, by type. */
export const SERVER_BLOCKS: ReadonlyMap<string, ObjectShape> = shapes([
  ['server_tool_use', objectShape('a server_tool_use block', { ...TYPE, id: nonEmptyString, name: nonEmptyString, input: anyJson }, { cache_control: cacheControl, caller })],
  ['web_search_tool_result', serverResult('web_search_tool_result')],
  ['web_fetch_tool_result', serverResult('web_fetch_tool_result')],
  ['advisor_tool_result', serverResult('advisor_tool_result')],
  ['code_execution_tool_result', serverResult('code_execution_tool_result')],
  ['bash_code_execution_tool_result', serverResult('bash_code_execution_tool_result')],
  ['text_editor_code_execution_tool_result', serverResult('text_editor_code_execution_tool_result')],
  ['tool_search_tool_result', serverResult('tool_search_tool_result')],
  ['mcp_tool_use', objectShape('an mcp_tool_use block', { ...TYPE, id: nonEmptyString, name: nonEmptyString, server_name: nonEmptyString, input: anyJson }, { cache_control: cacheControl })],
  ['mcp_tool_result', objectShape('an mcp_tool_result block', { ...TYPE, tool_use_id: nonEmptyString }, { cache_control: cacheControl, content: textOnly, is_error: boolean })],
  ['container_upload', objectShape('a container_upload block', { ...TYPE, file_id: nonEmptyString }, { cache_control: cacheControl })],
  [
    'compaction',
    objectShape('a compaction block', { ...TYPE }, { cache_control: cacheControl, content: nullable(string), encrypted_content: nullable(string), signature: nullable(string), tool_changes: nullable(arrayOf(toolChange, MAX_BLOCKS)) }),
  ],
  ['tool_addition', objectShape('a tool_addition block', { ...TYPE, tool: object }, { cache_control: cacheControl })],
  ['tool_removal', objectShape('a tool_removal block', { ...TYPE, tool: object }, { cache_control: cacheControl })],
  ['mcp_tool_listing', objectShape('an mcp_tool_listing block', { ...TYPE, mcp_server_name: nonEmptyString, tools: arrayOf(object, MAX_BLOCKS) })],
  ['fallback', objectShape('a fallback block', { ...TYPE, from: object, to: object }, { trigger: anyJson })],
]);

/** Every block a user or assistant message may hold; where each may stand is the validator's rule. */
export const MESSAGE_BLOCKS: ReadonlyMap<string, ObjectShape> = shapes([
  ['text', TEXT_BLOCK],
  ['image', IMAGE_BLOCK],
  ['document', DOCUMENT_BLOCK],
  ['search_result', SEARCH_RESULT_BLOCK],
  ['thinking', THINKING_BLOCK],
  ['redacted_thinking', REDACTED_THINKING_BLOCK],
  ['tool_use', TOOL_USE_BLOCK],
  ['tool_result', TOOL_RESULT_BLOCK],
  ...SERVER_BLOCKS,
]);

export const messageBlock: Check = typed(MESSAGE_BLOCKS, 'message content');
/** `system` (top-level, or a system message): text blocks only. */
export const textBlock: Check = typed(shapes([['text', TEXT_BLOCK]]), 'system content');
