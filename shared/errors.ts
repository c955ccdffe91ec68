/**
 * One error tree for the whole service. Each dialect (problem+json, SCIM,
 * OpenAI, Anthropic) has one middleware that maps `kind` to its own shape.
 * `expose` says whether `message` may reach the caller; when false the
 * caller gets a generic text and the message goes to the log only.
 */
export type ErrorKind =
  | 'invalid_input'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'too_large'
  | 'rate_limited'
  | 'insufficient_funds'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'unavailable'
  | 'internal';

const STATUS: Record<ErrorKind, number> = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  insufficient_funds: 402,
  upstream_unreachable: 502,
  upstream_timeout: 504,
  unavailable: 503,
  internal: 500,
};

export function statusOf(kind: ErrorKind): number {
  return STATUS[kind];
}

export interface AppErrorOptions {
  /** Dialect-specific sub-code, e.g. SCIM `scimType` or OpenAI `code`. */
  code?: string;
  expose?: boolean;
  cause?: unknown;
  /** Extra response headers (e.g. retry-after). */
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly code: string | undefined;
  readonly expose: boolean;
  readonly headers: Record<string, string>;

  constructor(kind: ErrorKind, message: string, options: AppErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.kind = kind;
    this.status = STATUS[kind];
    this.code = options.code;
    this.expose = options.expose ?? kind !== 'internal';
    this.headers = options.headers ?? {};
  }
}

export const invalidInput = (message: string, code?: string) => new AppError('invalid_input', message, { code });
export const unauthenticated = (message = 'Authentication required.') => new AppError('unauthenticated', message);
export const forbidden = (message = 'You do not have permission to do this.') => new AppError('forbidden', message);
export const notFound = (what = 'Resource') => new AppError('not_found', `${what} not found.`);
export const conflict = (message: string, code?: string) => new AppError('conflict', message, { code });

/** Turns anything thrown into an AppError; unknown errors become unexposed 500s. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('internal', err instanceof Error ? err.message : String(err), { expose: false, cause: err });
}

/** PostgreSQL unique_violation, as raised by both pg and PGlite. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}
