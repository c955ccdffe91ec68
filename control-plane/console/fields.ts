import { z } from 'zod';

// C0/C1 control characters (NUL cannot even be stored in PostgreSQL text) and
// unpaired UTF-16 surrogates (silently replaced on the way to UTF-8).
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A name people give to a team or a key: 1–100 printable characters after trimming. */
export const displayName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine((s) => !CONTROL.test(s), 'must not contain control characters')
  .refine((s) => !LONE_SURROGATE.test(s), 'must be valid Unicode text');
