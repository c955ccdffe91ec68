import { isObject } from '../../../shared/json.js';
import { z } from 'zod';
import { invalidInput } from '../../../shared/errors.js';
import { checkSchema } from '../schema-check.js';
import { type Json } from './json.js';

/**
 * What a Responses request may hold, checked field by field. Every field a
 * client sends is accepted as long as it is well-formed; fields this schema
 * does not know pass through (the translation names them as dropped). A
 * malformed field is refused with a message naming it, e.g.
 * `input[2].call_id: expected a string`.
 */

const text = z.string();

export const InputTextPart = z.looseObject({ type: z.literal('input_text'), text });
export const InputImagePart = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.string().nullish(),
  file_id: z.string().nullish(),
  detail: z.enum(['low', 'high', 'auto']).nullish(),
});
export const OutputTextPart = z.looseObject({ type: z.literal('output_text'), text, annotations: z.array(z.unknown()).optional() });
export const RefusalPart = z.looseObject({ type: z.literal('refusal'), refusal: text });

/** A content part of a known kind is checked; an unknown one needs only a `type` (it is dropped and named). */
const ContentPart = z.looseObject({ type: z.string() });

export const MessageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([text, z.array(ContentPart)]),
  id: z.string().optional(),
  status: z.string().optional(),
});

export const FunctionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: text,
  name: text,
  arguments: text,
  namespace: z.string().optional(),
  id: z.string().optional(),
  status: z.string().optional(),
});

const ToolOutput = z.union([text, z.array(ContentPart)]);

/*
 * An output's `call_id` may be missing: Codex's goal tool sends
 * `{"type":"function_call_output","name":"goal_objective","namespace":"agent","output":"x"}`.
 * A Responses provider gets it as sent; a translation turns it into text (request-to-chat.ts).
 */
export const FunctionCallOutputItem = z.looseObject({ type: z.literal('function_call_output'), call_id: text.optional(), output: ToolOutput });
export const CustomToolCallItem = z.looseObject({ type: z.literal('custom_tool_call'), call_id: text, name: text, input: text });
export const CustomToolCallOutputItem = z.looseObject({ type: z.literal('custom_tool_call_output'), call_id: text.optional(), output: ToolOutput });
export const ReasoningItem = z.looseObject({
  type: z.literal('reasoning'),
  summary: z.array(z.unknown()).optional(),
  encrypted_content: z.string().nullish(),
});
const AnyItem = z.looseObject({ type: z.string() });

const ITEM_SCHEMAS: Record<string, z.ZodType> = {
  message: MessageItem,
  function_call: FunctionCallItem,
  function_call_output: FunctionCallOutputItem,
  custom_tool_call: CustomToolCallItem,
  custom_tool_call_output: CustomToolCallOutputItem,
  reasoning: ReasoningItem,
};

const PART_SCHEMAS: Record<string, z.ZodType> = {
  input_text: InputTextPart,
  input_image: InputImagePart,
  output_text: OutputTextPart,
  refusal: RefusalPart,
};

export const FunctionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
export const CustomTool = z.looseObject({ type: z.literal('custom'), name: z.string().min(1), description: z.string().optional() });
export const NamespaceTool = z.looseObject({
  type: z.literal('namespace'),
  name: z.string().min(1),
  description: z.string().optional(),
  tools: z.array(z.union([FunctionTool, CustomTool])),
});
export const WebSearchTool = z.looseObject({
  type: z.string(),
  search_context_size: z.enum(['low', 'medium', 'high']).optional(),
  user_location: z.looseObject({}).nullish(),
});

const TOOL_SCHEMAS: Record<string, z.ZodType> = {
  function: FunctionTool,
  custom: CustomTool,
  namespace: NamespaceTool,
};

const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string() }),
  z.looseObject({ type: z.literal('custom'), name: z.string() }),
  z.looseObject({ type: z.literal('allowed_tools'), mode: z.enum(['auto', 'required']), tools: z.array(z.looseObject({ type: z.string() })) }),
  z.looseObject({ type: z.string() }),
]);

const TextFormat = z.union([
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string(),
    schema: z.record(z.string(), z.unknown()),
    description: z.string().optional(),
    strict: z.boolean().nullish(),
  }),
]);

const count = z.number().int().positive();

/** The top-level fields; `input` and `tools` are checked item by item below, for messages that name the item. */
export const ResponsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([text, z.array(z.unknown())]).optional(),
  instructions: z.string().nullish(),
  tools: z.array(z.unknown()).optional(),
  tool_choice: ToolChoice.optional(),
  parallel_tool_calls: z.boolean().nullish(),
  max_output_tokens: count.nullish(),
  max_tool_calls: count.nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  text: z.looseObject({ format: TextFormat.optional(), verbosity: z.enum(['low', 'medium', 'high']).nullish() }).nullish(),
  reasoning: z
    .looseObject({
      effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullish(),
      summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
    })
    .nullish(),
  include: z.array(z.string()).nullish(),
  store: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({}).nullish(),
  background: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  prompt_cache_key: z.string().nullish(),
  client_metadata: z.record(z.string(), z.unknown()).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  user: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  truncation: z.enum(['auto', 'disabled']).nullish(),
  service_tier: z.string().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
});

export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;

function checkParts(content: unknown, at: readonly PropertyKey[]): void {
  if (!Array.isArray(content)) return;
  content.forEach((part, i) => {
    const type = isObject(part) ? part.type : undefined;
    const schema = typeof type === 'string' ? PART_SCHEMAS[type] : undefined;
    if (schema) checkSchema(schema, part, [...at, i]);
  });
}

/** An input item's kind: its `type`, or `message` for the short form `{ role, content }`. */
export function itemType(item: Json): string {
  return typeof item.type === 'string' ? item.type : 'message';
}

/**
 * The client's body → a checked Responses request. Throws an `invalid_input`
 * AppError (a 400 in the OpenAI error shape) naming the first malformed field.
 */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (!isObject(body)) throw invalidInput('The request body must be a JSON object.');
  checkSchema(ResponsesRequestSchema, body, []);
  const request = body as ResponsesRequest;
  if (Array.isArray(request.input)) {
    request.input.forEach((item, i) => {
      if (!isObject(item)) throw invalidInput(`input[${i}]: expected an object`);
      if (item.type === undefined && item.role === undefined) throw invalidInput(`input[${i}]: expected an item with a type or a role`);
      const type = itemType(item);
      checkSchema(ITEM_SCHEMAS[type] ?? AnyItem, item, ['input', i]);
      if (type === 'message') checkParts(item.content, ['input', i, 'content']);
      if (type === 'function_call_output' || type === 'custom_tool_call_output') checkParts(item.output, ['input', i, 'output']);
    });
  }
  request.tools?.forEach((tool, i) => {
    const type = isObject(tool) ? tool.type : undefined;
    const schema = typeof type === 'string' ? (TOOL_SCHEMAS[type] ?? (type.startsWith('web_search') ? WebSearchTool : undefined)) : undefined;
    checkSchema(schema ?? AnyItem, tool, ['tools', i]);
  });
  return request;
}
