import type { Context } from 'koa';
import { AppError, invalidInput } from '../../shared/errors.js';
import { readBody } from '../http/body.js';

/** A User is a few hundred bytes; anything near this is not a User. */
export const MAX_SCIM_BODY_BYTES = 64 * 1024;
const MEDIA_TYPES = ['application/scim+json', 'application/json'];

/** Reads a SCIM request body: `application/scim+json` or `application/json`, parsed, never trusted. */
export async function readScimJson(ctx: Context): Promise<unknown> {
  let text: string;
  try {
    text = await readBody(ctx, MAX_SCIM_BODY_BYTES);
  } catch (err) {
    // An oversized body is bad input like any other: connectors handle a 400 with a scimType.
    if (err instanceof AppError && err.kind === 'too_large') throw invalidInput(err.message, 'invalidValue');
    throw err;
  }
  if (ctx.get('content-type') && !ctx.is(MEDIA_TYPES)) {
    throw invalidInput(`Content-Type must be ${MEDIA_TYPES.join(' or ')}.`, 'invalidSyntax');
  }
  if (text.trim() === '') throw invalidInput('The request body is empty.', 'invalidSyntax');
  try {
    // A leading byte-order mark is how some .NET clients start a UTF-8 body.
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw invalidInput('The request body is not valid JSON.', 'invalidSyntax');
  }
}
