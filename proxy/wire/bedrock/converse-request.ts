import { isObject, type JsonObject } from '../../../shared/json.js';

/**
 * A Chat Completions request (the client's, or the pivot's translation) as
 * Bedrock's Converse wants it: system messages become `system` blocks, a
 * user's text and inline images its content blocks, tool
 * results travel as a user turn's `toolResult` blocks and tool calls as
 * `toolUse` blocks, tools as `toolConfig.tools[].toolSpec`, and the sampling
 * fields as `inferenceConfig`. Converse refuses two turns of one role in a
 * row, so neighbours of one role (a tool result after a user's text, several
 * tool results) are joined into one turn.
 */

type Block = JsonObject;
interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

/** A message's text, whether given as a string or as text parts (other parts are not Converse text). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p): p is JsonObject => isObject(p) && p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('');
}

/** A tool call's arguments as the object Converse takes; text that is not a JSON object is kept under `input`. */
function toolInput(args: unknown): JsonObject {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const parsed = JSON.parse(args) as unknown;
    return isObject(parsed) ? parsed : { input: parsed };
  } catch {
    return { input: args };
  }
}

/** An assistant message's text and tool calls as Converse content blocks (a request's turn, or an answer's content: converse-from-chat.ts). */
export function assistantBlocks(m: JsonObject): Block[] {
  const blocks: Block[] = [];
  const text = textOf(m.content);
  if (text) blocks.push({ text });
  if (Array.isArray(m.tool_calls))
    for (const call of m.tool_calls) {
      if (!isObject(call) || !isObject(call.function)) continue;
      blocks.push({ toolUse: { toolUseId: call.id, name: call.function.name, input: toolInput(call.function.arguments) } });
    }
  return blocks;
}

function blocksOf(m: JsonObject): { role: Turn['role']; blocks: Block[] } | undefined {
  if (m.role === 'assistant') return { role: 'assistant', blocks: assistantBlocks(m) };
  if (m.role === 'tool') return { role: 'user', blocks: [{ toolResult: { toolUseId: m.tool_call_id, content: [{ text: textOf(m.content) }] } }] };
  if (m.role === 'user') return { role: 'user', blocks: userBlocks(m.content) };
  return undefined;
}

/** An image Converse takes inline: a data URL of one of its four formats (a URL it would have to fetch is not). */
const DATA_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,/;

/** A user message's parts as Converse blocks, in order: text, and images given inline. */
function userBlocks(content: unknown): Block[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  const blocks: Block[] = [];
  for (const p of content) {
    if (!isObject(p)) continue;
    if (p.type === 'text' && typeof p.text === 'string' && p.text) blocks.push({ text: p.text });
    const url = p.type === 'image_url' && isObject(p.image_url) && typeof p.image_url.url === 'string' ? p.image_url.url : '';
    const inline = DATA_IMAGE.exec(url);
    if (inline) blocks.push({ image: { format: inline[1]!, source: { bytes: url.slice(inline[0].length) } } });
  }
  return blocks;
}

function turnsOf(messages: unknown[]): { system: Block[]; turns: Turn[] } {
  const system: Block[] = [];
  const turns: Turn[] = [];
  for (const m of messages) {
    if (!isObject(m)) continue;
    if (m.role === 'system' || m.role === 'developer') {
      const text = textOf(m.content);
      if (text) system.push({ text });
      continue;
    }
    const part = blocksOf(m);
    if (!part || part.blocks.length === 0) continue;
    const last = turns.at(-1);
    if (last?.role === part.role) last.content.push(...part.blocks);
    else turns.push({ role: part.role, content: part.blocks });
  }
  return { system, turns };
}

function toolChoiceOf(choice: unknown): JsonObject | undefined {
  if (choice === 'required') return { any: {} };
  if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') return { tool: { name: choice.function.name } };
  if (choice === 'auto') return { auto: {} };
  return undefined;
}

function toolConfigOf(body: JsonObject): JsonObject | undefined {
  if (!Array.isArray(body.tools) || body.tools.length === 0 || body.tool_choice === 'none') return undefined;
  const tools = body.tools
    .filter((t): t is JsonObject & { function: JsonObject } => isObject(t) && isObject(t.function))
    .map((t) => {
      const spec: JsonObject = {
        name: t.function.name,
        inputSchema: { json: isObject(t.function.parameters) ? t.function.parameters : { type: 'object' } },
      };
      if (typeof t.function.description === 'string') spec.description = t.function.description;
      return { toolSpec: spec };
    });
  const config: JsonObject = { tools };
  const choice = toolChoiceOf(body.tool_choice);
  if (choice) config.toolChoice = choice;
  return config;
}

function inferenceConfigOf(body: JsonObject): JsonObject | undefined {
  const config: JsonObject = {};
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (typeof max === 'number') config.maxTokens = max;
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;
  if (typeof body.stop === 'string') config.stopSequences = [body.stop];
  else if (Array.isArray(body.stop)) config.stopSequences = body.stop.filter((s) => typeof s === 'string');
  return Object.keys(config).length ? config : undefined;
}

/** The Converse body for a Chat body; the model and `stream` are the path's. */
export function converseRequest(chat: JsonObject): JsonObject {
  const { system, turns } = turnsOf(Array.isArray(chat.messages) ? chat.messages : []);
  const out: JsonObject = { messages: turns };
  if (system.length) out.system = system;
  const inference = inferenceConfigOf(chat);
  if (inference) out.inferenceConfig = inference;
  const tools = toolConfigOf(chat);
  if (tools) out.toolConfig = tools;
  return out;
}
