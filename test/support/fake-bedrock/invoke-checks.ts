import type { AwsRefusal } from './sigv4-check.js';

/**
 * What Bedrock's InvokeModel checks of an Anthropic body: the version in
 * the body (`bedrock-2023-05-31`, or a dated Anthropic API version, which
 * the Anthropic Bedrock SDK copies there from its `anthropic-version`), betas as a list in the body, no `model`
 * or `stream` (the model is the path's, streaming the operation's), and
 * `max_tokens`; its refusals are 400 `ValidationException`s in these words.
 */
const ANTHROPIC_VERSION = /^(bedrock-2023-05-31|\d{4}-\d{2}-\d{2})$/;

function malformed(detail: string): AwsRefusal {
  return { status: 400, type: 'ValidationException', message: `Malformed input request: ${detail}, please reformat your input and try again.` };
}

export function invokeBodyRefusal(
  modelId: string,
  body: Record<string, unknown>,
  acceptedBetas: readonly string[] | undefined,
): AwsRefusal | undefined {
  if (!/(^|\.)anthropic\./.test(modelId) && !modelId.startsWith('arn:')) {
    return { status: 400, type: 'ValidationException', message: `The fake answers InvokeModel for Anthropic models only, not ${modelId}.` };
  }
  if (body.anthropic_version === undefined) return malformed('#: required key [anthropic_version] not found');
  if (typeof body.anthropic_version !== 'string' || !ANTHROPIC_VERSION.test(body.anthropic_version))
    return { status: 400, type: 'ValidationException', message: 'Invalid API version' };
  for (const key of ['model', 'stream']) if (key in body) return malformed(`#: extraneous key [${key}] is not permitted`);
  if (typeof body.max_tokens !== 'number') return malformed('#: required key [max_tokens] not found');
  const betas = body.anthropic_beta;
  if (betas === undefined) return undefined;
  if (!Array.isArray(betas) || betas.some((b) => typeof b !== 'string'))
    return malformed('#/anthropic_beta: expected type: JSONArray, found: String');
  if (acceptedBetas && betas.some((b) => !acceptedBetas.includes(b as string)))
    return { status: 400, type: 'ValidationException', message: 'invalid beta flag' };
  return undefined;
}
