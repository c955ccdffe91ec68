import type { Context, Next } from 'koa';
import type { Logger } from '../../shared/logger.js';
import { statusOf, toStoreAwareError, type ErrorKind } from '../../shared/errors.js';

const TITLES: Record<ErrorKind, string> = {
  invalid_input: 'Bad Request',
  unauthenticated: 'Unauthorized',
  forbidden: 'Forbidden',
  not_found: 'Not Found',
  conflict: 'Conflict',
  too_large: 'Payload Too Large',
  rate_limited: 'Too Many Requests',
  insufficient_funds: 'Payment Required',
  upstream_unreachable: 'Bad Gateway',
  upstream_timeout: 'Gateway Timeout',
  unavailable: 'Service Unavailable',
  internal: 'Internal Server Error',
};

/** The console API's dialect: RFC 9457 problem+json. Internal detail goes to the log only. */
export function problemErrors(logger: Logger) {
  return async function problemJson(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) {
        writeProblem(ctx, 'not_found', 'No such route.');
      } else if (ctx.status === 405 && ctx.body == null) {
        // Set by the router's allowedMethods; it already wrote the Allow header.
        ctx.type = 'application/problem+json';
        ctx.body = {
          type: 'https://tollgate.dev/problems/method-not-allowed',
          title: 'Method Not Allowed',
          status: 405,
          detail: `This route answers ${ctx.response.get('Allow') || 'other methods'}.`,
        };
      }
    } catch (thrown) {
      const err = toStoreAwareError(thrown);
      if (!err.expose) logger.error({ err: thrown, path: ctx.path, method: ctx.method }, 'console request failed');
      for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
      if (err.kind === 'unauthenticated') ctx.set('WWW-Authenticate', 'Bearer');
      writeProblem(ctx, err.kind, err.expose ? err.message : 'An internal error occurred.');
    }
  };
}

export function writeProblem(ctx: Context, kind: ErrorKind, detail: string): void {
  ctx.status = statusOf(kind);
  ctx.type = 'application/problem+json';
  ctx.body = { type: `https://tollgate.dev/problems/${kind.replace(/_/g, '-')}`, title: TITLES[kind], status: ctx.status, detail };
}
