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

/**
 * `toAppError` for the control plane's dialects: a database that cannot be
 * reached is a 503 with retry-after, not a 500, since the request may succeed
 * a moment later (the server back, or another replica's connection). Not for
 * the proxy, which has no database: a reset there is the provider's.
 */
export function toStoreAwareError(err: unknown): AppError {
  if (!(err instanceof AppError) && isStoreUnavailable(err)) {
    return new AppError('unavailable', 'The database is unavailable right now. Retry shortly.', { cause: err, headers: { 'retry-after': '2' } });
  }
  return toAppError(err);
}

/** SQLSTATEs of a server going away or not there yet: admin_shutdown, crash_shutdown, cannot_connect_now. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
/** How the socket under a database client fails when the server is down or restarting. */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
/** node-postgres says these in words, with no code: a connection lost mid-query, or none got in time. */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed)/;

/**
 * The database could not be reached or is restarting (as raised by pg; the
 * embedded store has no server to lose), as opposed to a query it refused.
 * SQLSTATE class 08 is a connection exception.
 */
export function isStoreUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const { code, message, errors, cause } = err as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
  // A connection to localhost tries each address: Node reports an AggregateError of both refusals.
  if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => isStoreUnavailable(e, depth + 1))) return true;
  return cause !== undefined && isStoreUnavailable(cause, depth + 1);
}
