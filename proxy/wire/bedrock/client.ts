import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../../../shared/errors.js';
import { isObject } from '../../../shared/json.js';

/** What a Messages client sends as `anthropic-version` when a Bedrock client gave its version in the body. */
const MESSAGES_VERSION = '2023-06-01';

/**
 * A Bedrock client's InvokeModel body (Claude Code with
 * `CLAUDE_CODE_USE_BEDROCK`) as the Messages call it stands for: the model
 * is the path's id (an alias or one of its client names), streaming the
 * operation's; the version and the betas move from the body to the headers
 * a Messages call carries them in (what goes on to a Bedrock provider puts
 * them back). `headers` is the request's own, changed in place.
 */
export function messagesFromInvoke(raw: Buffer, modelId: string, stream: boolean, headers: IncomingHttpHeaders): Buffer {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError('invalid_input', 'The request body is not valid JSON.');
  }
  if (!isObject(body)) throw new AppError('invalid_input', 'The request body must be a JSON object.');
  const { anthropic_version: _version, anthropic_beta: betas, ...rest } = body;
  if (Array.isArray(betas)) {
    const named = betas.filter((b): b is string => typeof b === 'string');
    if (named.length) headers['anthropic-beta'] = named.join(',');
  }
  headers['anthropic-version'] ??= MESSAGES_VERSION;
  return Buffer.from(JSON.stringify({ ...rest, model: modelId, stream }));
}
