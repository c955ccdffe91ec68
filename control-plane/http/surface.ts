import type Router from '@koa/router';
import compose from 'koa-compose';
import type { Context, Middleware, Next } from 'koa';

/**
 * One API surface: a path prefix, the one error middleware of its dialect,
 * and its routers. A request outside the prefix passes through untouched.
 */
export function surface(prefix: string, errors: Middleware, routers: Router[]): Middleware {
  const stack = compose([errors, ...routers.flatMap((r) => [r.routes(), r.allowedMethods()])] as Middleware[]);
  return async function mountSurface(ctx: Context, next: Next): Promise<void> {
    if (ctx.path.startsWith(prefix)) await stack(ctx, async () => undefined);
    else await next();
  };
}
