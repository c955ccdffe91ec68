import type { Context, Next } from 'koa';
import type { Logger } from '../../shared/logger.js';
import { toStoreAwareError } from '../../shared/errors.js';
import { ERROR_SCHEMA } from '../services/scim/resource.js';

export const SCIM_MEDIA_TYPE = 'application/scim+json';

/** scimType values of RFC 7644 §3.12 that a 400 may carry; anything else is not sent. */
export const SCIM_TYPES: ReadonlySet<string> = new Set([
  'invalidFilter',
  'tooMany',
  'uniqueness',
  'mutability',
  'invalidSyntax',
  'invalidPath',
  'noTarget',
  'invalidValue',
  'invalidVers',
  'sensitive',
]);

export function writeScimError(ctx: Context, status: number, detail: string, scimType?: string): void {
  const body: Record<string, unknown> = { schemas: [ERROR_SCHEMA], status: String(status), detail };
  if (scimType && SCIM_TYPES.has(scimType)) body.scimType = scimType;
  ctx.status = status;
  ctx.body = body;
  ctx.type = SCIM_MEDIA_TYPE;
}

/** The SCIM dialect: RFC 7644 §3.12 error bodies. Internal detail goes to the log only. */
export function scimErrors(logger: Logger) {
  return async function scimErrorBody(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) writeScimError(ctx, 404, 'No such SCIM endpoint.');
        else if (ctx.status === 405) writeScimError(ctx, 405, `${ctx.method} is not supported on this endpoint.`);
        else if (ctx.status === 501) writeScimError(ctx, 501, `${ctx.method} is not implemented.`);
      }
    } catch (thrown) {
      const err = toStoreAwareError(thrown);
      if (!err.expose) logger.error({ err: thrown, path: ctx.path, method: ctx.method }, 'SCIM request failed');
      for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
      if (err.kind === 'unauthenticated') ctx.set('WWW-Authenticate', 'Bearer');
      writeScimError(
        ctx,
        err.status,
        err.expose ? err.message : 'An internal error occurred.',
        err.status === 400 || err.status === 409 ? err.code : undefined,
      );
    }
  };
}
