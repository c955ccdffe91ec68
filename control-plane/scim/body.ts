import type { Context } from 'koa';
import { invalidInput } from '../../shared/errors.js';
import { readBody } from '../http/body.js';

/** A User is a few hundred bytes; anything near this is not a User. */
export const MAX_SCIM_BODY_BYTES = 64 * 1024;
const MEDIA_TYPES = ['application/scim+json', 'application/json'];

/** Reads a SCIM request body: `application/scim+json` or `application/json`, parsed, never trusted. */
export async function readScimJson(ctx: Context): Promise<unknown> {
  const text = await readBody(ctx, MAX_SCIM_BODY_BYTES);
  if (ctx.get('content-type') && !ctx.is(MEDIA_TYPES)) {
    throw invalidInput(`Content-Type must be ${MEDIA_TYPES.join(' or ')}.`, 'invalidSyntax');
  }
  if (text.trim() === '') throw invalidInput('The request body is empty.', 'invalidSyntax');
  try {
    return JSON.parse(text);
  } catch {
    throw invalidInput('The request body is not valid JSON.', 'invalidSyntax');
  }
}
