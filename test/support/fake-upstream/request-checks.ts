/** The checks a real provider makes before it accepts a model request. */
import type { Dialect } from './errors.js';
import type { RecordedRequest, Wire } from './types.js';

export type CheckResult = { ok: true; body: Record<string, unknown> } | { ok: false; status: number; message: string };

export function credentialOf(headers: RecordedRequest['headers'], dialect: Dialect, query = ''): RecordedRequest['credential'] {
  if (dialect === 'google') {
    // Google takes its key in `x-goog-api-key` or as `?key=`.
    const goog = headers['x-goog-api-key'];
    if (typeof goog === 'string' && goog !== '') return { header: 'x-goog-api-key', key: goog };
    const key = new URLSearchParams(query).get('key');
    return key ? { header: 'key', key } : null;
  }
  const apiKey = headers['x-api-key'];
  const fromApiKey = typeof apiKey === 'string' && apiKey !== '' ? { header: 'x-api-key' as const, key: apiKey } : null;
  const auth = headers.authorization;
  const bearer = typeof auth === 'string' ? /^Bearer\s+(\S.*)$/i.exec(auth) : null;
  const fromAuth = bearer ? { header: 'authorization' as const, key: bearer[1]! } : null;
  // Each provider looks at its own header first, as the real ones do.
  return dialect === 'openai' ? (fromAuth ?? fromApiKey) : (fromApiKey ?? fromAuth);
}

function isPositiveInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

/** A Gemini call: a key, a body with `contents`, a positive `maxOutputTokens` if given (as Google checks them). */
function checkGemini(record: RecordedRequest, requireKey: boolean, purpose: 'call' | 'count'): CheckResult {
  if (record.credential === null && requireKey)
    return {
      ok: false,
      status: 403,
      message:
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    };
  const body = record.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { ok: false, status: 400, message: 'Invalid JSON payload received.' };
  const fields = body as Record<string, unknown>;
  const request =
    purpose === 'count' && typeof fields.generateContentRequest === 'object' ? (fields.generateContentRequest as Record<string, unknown>) : fields;
  if (!Array.isArray(request.contents)) return { ok: false, status: 400, message: '* GenerateContentRequest.contents: contents is not specified' };
  const config = request.generationConfig as Record<string, unknown> | undefined;
  const max = config?.maxOutputTokens;
  if (max !== undefined && !isPositiveInteger(max))
    return { ok: false, status: 400, message: 'generationConfig.maxOutputTokens: must be a positive integer' };
  return { ok: true, body: fields };
}

/** `count`: Anthropic's count_tokens, which takes a model call's body without max_tokens. */
export function checkModelRequest(wire: Wire, record: RecordedRequest, requireKey = true, purpose: 'call' | 'count' = 'call'): CheckResult {
  if (wire === 'gemini') return checkGemini(record, requireKey, purpose);
  const dialect: Dialect = wire === 'messages' ? 'anthropic' : 'openai';
  if (record.credential === null && requireKey) {
    return {
      ok: false,
      status: 401,
      message: dialect === 'openai' ? "You didn't provide an API key." : 'x-api-key header is required',
    };
  }
  if (dialect === 'anthropic' && record.headers['anthropic-version'] === undefined) {
    return { ok: false, status: 400, message: 'anthropic-version: header is required' };
  }
  const body = record.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, status: 400, message: 'The request body is not valid JSON.' };
  }
  const fields = body as Record<string, unknown>;
  if (typeof fields.model !== 'string' || fields.model === '') {
    return { ok: false, status: 400, message: 'model: Field required' };
  }
  if (wire === 'responses') {
    if (fields.input !== undefined && typeof fields.input !== 'string' && !Array.isArray(fields.input)) {
      return { ok: false, status: 400, message: "Invalid type for 'input': expected a string or an array of input items." };
    }
  } else if (!Array.isArray(fields.messages)) {
    return { ok: false, status: 400, message: 'messages: Field required' };
  }
  if (dialect === 'anthropic' && purpose === 'call' && fields.max_tokens === undefined) {
    return { ok: false, status: 400, message: 'max_tokens: Field required' };
  }
  for (const name of ['max_tokens', 'max_completion_tokens', 'max_output_tokens']) {
    const value = fields[name];
    if (value !== undefined && value !== null && !isPositiveInteger(value)) {
      return { ok: false, status: 400, message: `${name}: must be a positive integer` };
    }
  }
  return { ok: true, body: fields };
}
