import Router from '@koa/router';
import type { Context } from 'koa';
import { pathToFileURL } from 'node:url';
import { packagePath } from '../../shared/package-root.js';
import type { ControlPlaneDeps } from '../deps.js';
import { loadStaticFiles, type StaticFile } from './static-files.js';

const PUBLIC_DIR = pathToFileURL(`${packagePath('control-plane', 'web', 'public')}/`);

/**
 * Same-origin only, no inline script or style, no framing: the console holds
 * an admin session, so a stray injection must not be able to run or exfiltrate.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/** The web console: static pages on top of the console API. */
export function webRouters(_deps: ControlPlaneDeps): Router[] {
  const files = loadStaticFiles(PUBLIC_DIR);
  const router = new Router();

  router.get('/', function consoleIndex(ctx: Context) {
    send(ctx, files.get('/index.html')!);
  });

  router.get('/{*path}', function staticOrNotFound(ctx: Context) {
    const file = files.get(ctx.path);
    if (file && ctx.path !== '/404.html') return send(ctx, file);
    send(ctx, files.get('/404.html')!, 404);
  });

  return [router];
}

function send(ctx: Context, file: StaticFile, status = 200): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) ctx.set(name, value);
  ctx.status = status;
  ctx.type = file.contentType;
  // File names carry no content hash, so the browser revalidates every time;
  // the ETag makes that a cheap 304.
  ctx.set('cache-control', status === 200 ? 'no-cache' : 'no-store');
  ctx.set('etag', file.etag);
  if (status === 200 && ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.body = file.body;
}
