import type { WireFormat } from '../../proxy/call.js';

export const FORMATS: WireFormat[] = ['chat', 'messages', 'responses'];

/** Each format as its clients call it, plus a streamed Responses call (Codex and the Agents SDK stream by default). */
export interface EdgeVariant {
  format: WireFormat;
  stream: boolean;
  name: string;
}

export const FORMAT_NAMES: Record<WireFormat, string> = { chat: 'Chat Completions', messages: 'Messages', responses: 'Responses', gemini: 'Gemini' };

export const VARIANTS: EdgeVariant[] = [
  ...FORMATS.map((format) => ({ format, stream: false, name: FORMAT_NAMES[format] })),
  { format: 'responses', stream: true, name: 'Responses, streamed' },
];

export interface EdgeAnswer {
  status: number;
  headers: Headers;
  text: string;
  // Tests read both providers' JSON shapes; typing each would restate the wire in every test.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export function edgePath(format: WireFormat, slug: string): string {
  if (format === 'responses') return `/${slug}/v1/responses`;
  return format === 'chat' ? `/${slug}/v1/chat/completions` : `/${slug}/anthropic/v1/messages`;
}

/**
 * A minimal valid body of each format. `extra` is written in Chat's field
 * names so one test reads the same on every format: on Responses,
 * `messages` becomes `input` and `max_tokens` becomes `max_output_tokens`.
 */
export function modelBody(format: WireFormat, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, unknown> = { model: 'tg/sonnet', messages: [{ role: 'user', content: 'Say hello to the proxy.' }] };
  if (format === 'messages') base.max_tokens = 64;
  const body = { ...base, ...extra };
  if (format !== 'responses') return body;
  const { messages, max_tokens, ...rest } = body;
  return { ...rest, input: messages, ...(max_tokens === undefined ? {} : { max_output_tokens: max_tokens }) };
}

/** One model call the way that format's clients send it: key header, version header, JSON body. */
export async function edgeCall(
  proxyUrl: string,
  format: WireFormat,
  slug: string,
  key: string | undefined,
  body: unknown,
  options: { headers?: Record<string, string>; signal?: AbortSignal; keyHeader?: 'authorization' | 'x-api-key' } = {},
): Promise<EdgeAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const keyHeader = options.keyHeader ?? (format === 'messages' ? 'x-api-key' : 'authorization');
  if (key !== undefined) headers[keyHeader] = keyHeader === 'authorization' ? `Bearer ${key}` : key;
  if (format === 'messages') headers['anthropic-version'] = '2023-06-01';
  Object.assign(headers, options.headers);
  for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
  const res = await fetch(`${proxyUrl}${edgePath(format, slug)}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: options.signal,
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** The error type of an answer, whichever wire format it is in. */
export function errorType(format: WireFormat, answer: EdgeAnswer): string | undefined {
  if (format !== 'messages') return answer.body?.error?.type;
  return answer.body?.type === 'error' ? answer.body.error?.type : undefined;
}

/** The data of each SSE event of a streamed answer, parsed. */
export function sseData(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

/** The model's text in a 200 answer, whichever format it is in, streamed or not. */
export function answerText(format: WireFormat, answer: EdgeAnswer): string {
  if (answer.body === undefined) {
    const events = sseData(answer.text);
    if (format === 'chat')
      return events.map((e) => (e as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? '').join('');
    if (format === 'messages') return events.map((e) => (e as { delta?: { text?: string } }).delta?.text ?? '').join('');
    return events.map((e) => (e.type === 'response.output_text.delta' ? String(e.delta) : '')).join('');
  }
  if (format === 'chat') return answer.body.choices[0].message.content;
  if (format === 'messages') return answer.body.content[0].text;
  const message = (answer.body.output as { type: string; content?: { type: string; text: string }[] }[]).find((i) => i.type === 'message');
  return message?.content?.find((p) => p.type === 'output_text')?.text ?? '';
}
