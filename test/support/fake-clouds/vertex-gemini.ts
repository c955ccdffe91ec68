import type { ServerResponse } from 'node:http';
import { relay, sendJson } from './relay.js';

/** Google's models on Vertex AI: `…/publishers/google/models/{model}:{action}`, with the query (`alt=sse`) as sent. */
export const VERTEX_GOOGLE_PATH =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)(?:\?(.*))?$/;

function googleInvalid(res: ServerResponse, message: string): void {
  sendJson(res, 400, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
}

/** What Vertex refuses in a Gemini body, or undefined: the model belongs in the path, and every turn names its role. */
function geminiBodyProblem(body: Record<string, unknown>): string | undefined {
  if ('model' in body) return 'Invalid JSON payload received. Unknown name "model": Cannot find field.';
  if (!Array.isArray(body.contents) || body.contents.length === 0) return 'Unable to submit request because it has an empty contents field.';
  for (const content of body.contents as unknown[]) {
    const role = (content as { role?: unknown } | null)?.role;
    if (role !== 'user' && role !== 'model') return 'Please use a valid role: user, model.';
  }
  return undefined;
}

/**
 * A Gemini call on Vertex, its token already taken: checked as Vertex checks
 * the body, then answered by the fake upstream's Gemini API as Google answers
 * (JSON, one JSON array, or SSE `data:` lines of GenerateContentResponse
 * with `alt=sse`), usage in `usageMetadata`.
 */
export function answerVertexGemini(
  res: ServerResponse,
  geminiBaseUrl: string,
  target: { model: string; action: string; query: string },
  body: Record<string, unknown>,
): boolean {
  const problem = geminiBodyProblem(body);
  if (problem !== undefined) {
    googleInvalid(res, problem);
    return false;
  }
  const query = target.query ? `?${target.query}` : '';
  relay(res, `${geminiBaseUrl}/v1beta/models/${target.model}:${target.action}${query}`, body, { 'x-goog-api-key': 'vertex-fake' });
  return true;
}
