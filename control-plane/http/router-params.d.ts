/*
 * @koa/router puts the matched path parameters on ctx.params, but handlers
 * typed with Koa's Context see them as `any`. Declared here once, a missing
 * parameter is `undefined` and the checks downstream (normalizeId and the
 * like) have to say what happens then.
 */
declare module 'koa' {
  interface ExtendableContext {
    params: Record<string, string | undefined>;
  }
}
export {};
