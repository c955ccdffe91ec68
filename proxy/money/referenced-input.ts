/**
 * A call whose body refers to input it does not carry (#43 finding 1): the
 * provider bills that input, which the body's size says nothing about, so
 * the hold assumes the model's whole context window (docs/proxy.md).
 */
import type { ParsedCall } from '../call.js';

/**
 * Bytes any body referring below its top level contains (`file_id`; `url"`
 * ends `"url"`, `"image_url"` and `"file_url"`): a body without them is not
 * walked. Two byte searches per call; the top-level references are read off
 * the parsed body instead, so they cost no search (six searches per call
 * were about a microsecond of every call's CPU).
 */
const FILE_ID = Buffer.from('file_id');
const URL_KEY_END = Buffer.from('url"');

const isUrl = (v: unknown): boolean => typeof v === 'string' && !v.startsWith('data:');

/** Walked only when a marker is present; nesting past this depth is taken as a reference (held, never missed). */
const MAX_DEPTH = 32;

function refers(v: unknown, depth: number): boolean {
  if (depth > MAX_DEPTH) return true;
  if (Array.isArray(v)) return v.some((x) => refers(x, depth + 1));
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  // OpenAI: file ids and file or image URLs (a data: URL carries its input).
  if (typeof o.file_id === 'string') return true;
  if (isUrl(o.file_url)) return true;
  if (isUrl(o.image_url) || (typeof o.image_url === 'object' && o.image_url !== null && isUrl((o.image_url as { url?: unknown }).url))) return true;
  // Anthropic: an image or document source by URL or by file.
  const source = o.source as { type?: unknown } | undefined;
  if (typeof source === 'object' && source !== null && (source.type === 'url' || source.type === 'file')) return true;
  for (const key in o) if (refers(o[key], depth + 1)) return true;
  return false;
}

/** The body refers to input it does not carry: a previous response, a conversation, a stored prompt, a file or image elsewhere. */
export function refersToInput(call: ParsedCall): boolean {
  const b = call.body;
  if (typeof b.previous_response_id === 'string') return true;
  if (b.conversation !== undefined && b.conversation !== null) return true;
  if (typeof b.prompt === 'object' && b.prompt !== null) return true;
  const raw = call.raw;
  if (!raw.includes(FILE_ID) && !raw.includes(URL_KEY_END)) return false;
  // A large body parsed in a worker keeps only its top level here: a marker in the rest is taken as a reference.
  if (call.partial) return true;
  return refers(b, 0);
}
