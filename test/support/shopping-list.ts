// The strict json_schema the structured-answer tests share: a shopping list
// whose items each have a name and an integer qty; an answer that holds to it,
// one that breaks it at $.items[2].qty, and the client's 502 for that one.

export const SHOPPING_LIST_SCHEMA = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string' }, qty: { type: 'integer' } }, required: ['name', 'qty'], additionalProperties: false },
    },
  },
  required: ['items'],
  additionalProperties: false,
};

export const VALID_LIST = '{"items":[{"name":"milk","qty":1},{"name":"eggs","qty":12},{"name":"tea","qty":2}]}';
export const INVALID_LIST = '{"items":[{"name":"milk","qty":1},{"name":"eggs","qty":12},{"name":"tea","qty":"two"}]}';

export const LIST_MISMATCH = {
  error: {
    message: 'The upstream\'s answer does not match the response_format json_schema: $.items[2].qty: expected integer, got string "two"',
    type: 'upstream_error',
    param: null,
    code: 'upstream_schema_mismatch',
  },
};
