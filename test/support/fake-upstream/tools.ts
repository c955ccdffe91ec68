/**
 * When the fake answers with tool calls, in either format: the request
 * defines tools, does not forbid them, and its last turn is not already a
 * tool result (so a client's tool loop ends with a text answer). It then
 * calls every tool the choice allows (one only when parallel calls are off),
 * with arguments built from each tool's schema.
 */
import type { Wire } from './types.js';
import { isObject } from '../../../shared/json.js';

type Json = Record<string, unknown>;

export interface PlannedCall {
  name: string;
  input: Json;
  /** A Responses namespace member's call (an MCP tool): the namespace it was declared in. */
  namespace?: string;
}

/** A value of the schema's type: the first enum value, else "x", 1, true, [] or an object of its properties. */
function exampleOf(schema: unknown): unknown {
  if (!isObject(schema)) return {};
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      return 'x';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'null':
      return null;
    default: {
      const out: Json = {};
      if (isObject(schema.properties)) for (const [key, sub] of Object.entries(schema.properties)) out[key] = exampleOf(sub);
      return out;
    }
  }
}

interface ToolSpec {
  name: string;
  schema: unknown;
}

function toolsOf(wire: Wire, body: Json): ToolSpec[] {
  if (!Array.isArray(body.tools)) return [];
  const out: ToolSpec[] = [];
  for (const t of body.tools) {
    if (!isObject(t)) continue;
    if (wire === 'messages' && typeof t.name === 'string') out.push({ name: t.name, schema: t.input_schema });
    else if (wire === 'responses' && t.type === 'function' && typeof t.name === 'string') out.push({ name: t.name, schema: t.parameters });
    else if (wire === 'chat' && isObject(t.function) && typeof t.function.name === 'string') {
      out.push({ name: t.function.name, schema: t.function.parameters });
    }
  }
  return out;
}

function lastTurnIsToolResult(wire: Wire, body: Json): boolean {
  const turns = wire === 'responses' ? body.input : body.messages;
  const last = Array.isArray(turns) ? turns[turns.length - 1] : undefined;
  if (!isObject(last)) return false;
  if (wire === 'responses') return last.type === 'function_call_output' || last.type === 'custom_tool_call_output';
  if (wire === 'chat') return last.role === 'tool';
  return last.role === 'user' && Array.isArray(last.content) && last.content.some((b) => isObject(b) && b.type === 'tool_result');
}

/** The tool calls this request gets, or none (a text answer). */
export function plannedToolCalls(wire: Wire, body: Json): PlannedCall[] {
  const tools = toolsOf(wire, body);
  if (tools.length === 0 || lastTurnIsToolResult(wire, body)) return [];
  const choice = body.tool_choice;
  let named: string | undefined;
  let single = false;
  if (wire === 'messages') {
    if (isObject(choice)) {
      if (choice.type === 'none') return [];
      if (choice.type === 'tool' && typeof choice.name === 'string') named = choice.name;
      single = choice.disable_parallel_tool_use === true;
    }
  } else if (wire === 'responses') {
    if (choice === 'none') return [];
    if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string') named = choice.name;
    single = body.parallel_tool_calls === false;
  } else {
    if (choice === 'none') return [];
    if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') named = choice.function.name;
    single = body.parallel_tool_calls === false;
  }
  const chosen = named === undefined ? tools : tools.filter((t) => t.name === named);
  return (single ? chosen.slice(0, 1) : chosen).map((t) => ({ name: t.name, input: exampleOf(t.schema) as Json }));
}

/** A tool call's arguments in the pieces a stream sends them in: an empty first piece, then a few characters at a time. */
export function argumentPieces(input: Json): string[] {
  const json = JSON.stringify(input);
  const pieces = [''];
  for (let i = 0; i < json.length; i += 8) pieces.push(json.slice(i, i + 8));
  return pieces;
}
