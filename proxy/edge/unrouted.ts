import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../../shared/errors.js';
import { WIRE_FORMATS } from '../../shared/wire-formats.js';
import type { WireFormat } from '../call.js';
import { PIVOT, WIRE, type WireParts } from '../wire/registry.js';

/** Whether a call's path or headers carry a format's mark. */
function isMarked(mark: WireParts['edge']['unroutedMark'], path: string, headers: IncomingHttpHeaders): boolean {
  return mark !== undefined && (mark.path.test(path) || headers[mark.header] !== undefined);
}

/** A model endpoint's path with the workspace slug left out: an SDK pointed at the bare edge URL (any format's base, any format's path). */
const escaped = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const SLUGLESS = new RegExp(
  `^/(${[...new Set(WIRE_FORMATS.map((f) => WIRE[f].edge.base))].map(escaped).join('|')})/` +
    `(${[...new Set(WIRE_FORMATS.flatMap((f) => Object.keys(WIRE[f].edge.paths)))].map(escaped).join('|')}|models/.+)$`,
);

/**
 * The 404 (400 for a slugless Messages call: see below) for a path no route matches. Most such calls come from an SDK whose
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
  const format = WIRE_FORMATS.find((f) => isMarked(WIRE[f].edge.unroutedMark, path, headers)) ?? PIVOT;
  const base = `${edgeBaseUrl.replace(/\/+$/, '')}/{workspace_slug}/${WIRE[format].edge.sdkBase}`;
  const where =
    `Model endpoints are under /{workspace_slug}/v1/… (OpenAI format) and /{workspace_slug}/anthropic/v1/… (Anthropic format): ` +
    `set the SDK's base URL to ${base}.`;
  const slugless = SLUGLESS.test(path);
  const first = slugless ? `The path ${path} has no workspace slug.` : `No route for ${method ?? 'GET'} ${path}.`;
  // Claude Code shows every 404 of the Messages format as "There's an issue with the selected
  // model" and never the message; a 400 it shows as it is. So a slugless Messages call (Claude
  // Code's, or an Anthropic SDK's) is a 400 whose message says what to fix; OpenAI's stays 404.
  const kind = slugless && WIRE[format].edge.sluglessIsBadRequest ? 'invalid_input' : 'not_found';
  return { format, error: new AppError(kind, `${first} ${where}`) };
}
