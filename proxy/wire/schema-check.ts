import type { z } from 'zod';
import { invalidInput } from '../../shared/errors.js';

/** A zod issue's path as a client reads it: `contents[1].parts[0].text`. */
function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  return out;
}

/**
 * Checks `value` against `schema`, throwing an `invalid_input` AppError (a
 * 400 in the client's error shape) that names the first malformed field,
 * under `at` when the value sits inside a larger body.
 */
export function checkSchema(schema: z.ZodType, value: unknown, at: readonly PropertyKey[] = []): void {
  const result = schema.safeParse(value);
  if (result.success) return;
  const issue = result.error.issues[0]!;
  throw invalidInput(`${fieldPath([...at, ...issue.path]) || 'body'}: ${issue.message}`);
}
