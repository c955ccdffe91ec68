import type { JsonObject } from '../../../shared/json.js';
import { anthropicBetas, betasFor } from '../../translate/betas.js';
import { bedrockPath } from './endpoint.js';

/** The version InvokeModel takes for Anthropic's Messages body. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

export interface InvokeRequest {
  path: string;
  body: Buffer;
  /** Betas the client asked for that Bedrock would refuse: left out, and named (`anthropic-beta:<name>`). */
  dropped: string[];
}

/**
 * A Messages provider request (the client's, or a translation's) as
 * InvokeModel wants it: the model moves to the path and `stream` to the
 * operation; the version and the betas Bedrock takes go in the body (betas
 * from the body a Bedrock client wrote, else the client's `anthropic-beta`).
 */
export function invokeRequest(messagesBody: Buffer, modelId: string, stream: boolean, betaHeader: string | string[] | undefined): InvokeRequest {
  const { model: _model, stream: _stream, anthropic_beta: inBody, ...body } = JSON.parse(messagesBody.toString('utf8')) as JsonObject;
  const asked = Array.isArray(inBody) ? inBody.filter((b): b is string => typeof b === 'string') : anthropicBetas(betaHeader);
  const { sent, dropped } = betasFor('bedrock', asked, true);
  const out: JsonObject = {
    ...body,
    anthropic_version: typeof body.anthropic_version === 'string' ? body.anthropic_version : BEDROCK_ANTHROPIC_VERSION,
  };
  if (sent.length) out.anthropic_beta = sent;
  return {
    path: bedrockPath(modelId, stream ? 'invoke-with-response-stream' : 'invoke'),
    body: Buffer.from(JSON.stringify(out)),
    dropped: dropped.map((b) => `anthropic-beta:${b}`),
  };
}
