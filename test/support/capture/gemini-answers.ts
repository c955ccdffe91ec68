// Plausible answers of Google's Gemini API for the capture server: a text
// answer, or a function call when the client offers the tool and has not
// sent its result back yet; streamed as SSE (`?alt=sse`, events separated
// by CRLF CRLF as Google writes them) or as one JSON array without it.
import type { Answer, ToolCall } from './answers.js';

const TEXT = 'hi';

type Body = Record<string, unknown>;

const parts = (content: unknown): Array<Record<string, unknown>> => {
  const list = (content as { parts?: unknown } | null)?.parts;
  return Array.isArray(list) ? (list as Array<Record<string, unknown>>) : [];
};

const hasFunctionResponse = (body: Body): boolean =>
  Array.isArray(body.contents) && body.contents.some((c) => parts(c).some((p) => p.functionResponse !== undefined));

const offersFunction = (body: Body, name: string): boolean =>
  Array.isArray(body.tools) &&
  body.tools.some((t: { functionDeclarations?: Array<{ name?: unknown }> }) => (t.functionDeclarations ?? []).some((d) => d.name === name));

function candidate(body: Body, tool: ToolCall | undefined): Record<string, unknown> {
  const call = tool !== undefined && offersFunction(body, tool.name) && !hasFunctionResponse(body);
  const part = call ? { functionCall: { name: tool.name, args: tool.input } } : { text: TEXT };
  return { content: { parts: [part], role: 'model' }, finishReason: 'STOP', index: 0 };
}

const usage = { promptTokenCount: 10, candidatesTokenCount: 1, totalTokenCount: 11, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 10 }] };

function answer(body: Body, tool: ToolCall | undefined): Record<string, unknown> {
  return { candidates: [candidate(body, tool)], usageMetadata: usage, modelVersion: 'gemini-2.5-flash', responseId: 'capture-response' };
}

/** `POST …/models/{model}:generateContent`, `:streamGenerateContent` (SSE or JSON array) and `:countTokens`. */
export function geminiAnswer(path: string, query: Record<string, string>, body: Body, tool: ToolCall | undefined): Answer | undefined {
  const action = /:([A-Za-z]+)$/.exec(path)?.[1];
  if (action === 'countTokens') return { status: 200, type: 'application/json', body: '{"totalTokens":10}' };
  if (action === 'generateContent') return { status: 200, type: 'application/json', body: JSON.stringify(answer(body, tool)) };
  if (action !== 'streamGenerateContent') return undefined;
  const whole = answer(body, tool);
  if (query.alt === 'sse') return { status: 200, type: 'text/event-stream', body: `data: ${JSON.stringify(whole)}\r\n\r\n` };
  return { status: 200, type: 'application/json', body: `[${JSON.stringify(whole, null, 2)}\n]` };
}

/** `GET …/v1beta/models`: Google's list shape, one model. */
export function geminiModels(): Answer {
  const model = {
    name: 'models/capture-model',
    displayName: 'capture-model',
    inputTokenLimit: 1048576,
    outputTokenLimit: 65536,
    supportedGenerationMethods: ['generateContent', 'countTokens'],
  };
  return { status: 200, type: 'application/json', body: JSON.stringify({ models: [model] }) };
}
