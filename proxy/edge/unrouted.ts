import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../../shared/errors.js';
import type { WireFormat } from '../call.js';

/** A model endpoint's path with the workspace slug left out: an SDK pointed at the bare edge URL. */
const SLUGLESS = /^\/(anthropic\/)?v1\/(chat\/completions|responses|messages|messages\/count_tokens|models)$/;

/**
 * The 404 for a path no route matches. Most such calls come from an SDK whose
 * base URL lacks the workspace slug, so the answer names the base URL to set,
 * in the caller's format when its path or headers tell (Anthropic's SDK
 * posts to `/v1/messages` and sends `anthropic-version`), else OpenAI's.
 */
export function unroutedCall(
  method: string | undefined,
  path: string,
  headers: IncomingHttpHeaders,
  edgeBaseUrl: string,
): { format: WireFormat; error: AppError } {
  const anthropic = path.includes('/anthropic/') || /\/v1\/messages(\/count_tokens)?$/.test(path) || headers['anthropic-version'] !== undefined;
  const format: WireFormat = anthropic ? 'messages' : 'chat';
  const base = `${edgeBaseUrl.replace(/\/+$/, '')}/{workspace_slug}/${anthropic ? 'anthropic' : 'v1'}`;
  const where =
    `Model endpoints are under /{workspace_slug}/v1/… (OpenAI format) and /{workspace_slug}/anthropic/v1/… (Anthropic format): ` +
    `set the SDK's base URL to ${base}.`;
  const first = SLUGLESS.test(path) ? `The path ${path} has no workspace slug.` : `No route for ${method ?? 'GET'} ${path}.`;
  return { format, error: new AppError('not_found', `${first} ${where}`) };
}
