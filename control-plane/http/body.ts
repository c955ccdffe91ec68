import type { Context } from 'koa';
import type { z } from 'zod';
import { AppError, invalidInput } from '../../shared/errors.js';

export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** Reads the raw body up to a limit; a larger body is refused with 413 before it is buffered whole. */
export async function readBody(ctx: Context, limit = MAX_JSON_BODY_BYTES): Promise<string> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw new AppError('too_large', `Request body is larger than ${limit} bytes.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new AppError('too_large', `Request body is larger than ${limit} bytes.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses a JSON body; `types` are the accepted media types. */
export async function readJson(ctx: Context, types: string[] = ['application/json']): Promise<unknown> {
  const text = await readBody(ctx);
  if (text.trim() === '') return undefined;
  if (ctx.get('content-type') && !ctx.is(types)) {
    throw invalidInput(`Content-Type must be ${types.join(' or ')}.`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw invalidInput('Request body is not valid JSON.', 'invalidSyntax');
  }
}

/** Reads and validates a console API body; every problem is named in one message. */
export async function readValid<S extends z.ZodType>(ctx: Context, schema: S): Promise<z.infer<S>> {
  const raw = await readJson(ctx);
  return parseValid(schema, raw ?? {});
}

export function parseValid<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .map((i) => {
        const where = i.path.length ? i.path.join('.') : 'body';
        if (i.code === 'unrecognized_keys') return `${where}: unknown field(s) ${i.keys.map((k) => `"${k}"`).join(', ')}`;
        return `${where}: ${i.message}`;
      })
      .join('; ');
    throw invalidInput(detail);
  }
  return parsed.data;
}
