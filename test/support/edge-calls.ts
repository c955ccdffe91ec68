import type { WireFormat } from '../../proxy/call.js';

export const FORMATS: WireFormat[] = ['chat', 'messages'];

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

/** A minimal valid body of each format. */
export function modelBody(format: WireFormat, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, unknown> = { model: 'tg/sonnet', messages: [{ role: 'user', content: 'Say hello to the proxy.' }] };
  if (format === 'messages') base.max_tokens = 64;
  return { ...base, ...extra };
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
  const keyHeader = options.keyHeader ?? (format === 'chat' ? 'authorization' : 'x-api-key');
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
  return format === 'chat' ? answer.body?.error?.type : answer.body?.type === 'error' ? answer.body.error?.type : undefined;
}
