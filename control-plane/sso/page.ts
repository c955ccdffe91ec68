import type { Context, Next } from 'koa';
import type { Logger } from '../../shared/logger.js';
import { toStoreAwareError, type ErrorKind } from '../../shared/errors.js';

const TITLES: Partial<Record<ErrorKind, string>> = {
  forbidden: 'Sign-in refused',
  not_found: 'Single sign-on is not available',
  conflict: 'Sign-in refused',
  upstream_unreachable: 'Identity provider unreachable',
  upstream_timeout: 'Identity provider unreachable',
  unavailable: 'Single sign-on is unavailable',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Frames of these pages would let another site dress a click on them up as something else. */
const FRAMING = "frame-ancestors 'none'";

function writeHtml(ctx: Context, status: number, csp: string, title: string, inner: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Security-Policy', `${csp}; ${FRAMING}`);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · Tollgate</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2328}h1{font-size:1.4rem}</style>
</head><body><h1>${escapeHtml(title)}</h1>${inner}</body></html>
`;
}

/** A small self-contained HTML page: the browser landed here, not a script. */
export function writePage(ctx: Context, status: number, title: string, message: string): void {
  writeHtml(
    ctx,
    status,
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
    title,
    `<p>${escapeHtml(message)}</p><p><a href="/">Back to the console</a></p>`,
  );
}

/**
 * A page whose one button POSTs to `action` (same origin). form-action is not
 * limited: browsers apply it to the redirect that follows, which goes to the
 * identity provider.
 */
export function writeConfirmPage(ctx: Context, page: { title: string; paragraphs: string[]; action: string; button: string }): void {
  const paragraphs = page.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('');
  writeHtml(
    ctx,
    200,
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'",
    page.title,
    `${paragraphs}<form method="post" action="${escapeHtml(page.action)}"><button type="submit">${escapeHtml(page.button)}</button></form>`,
  );
}

export interface FormPage {
  title: string;
  paragraphs: string[];
  action: string;
  fields: { name: string; label: string; value: string }[];
  button: string;
  /** A second button that posts decision=deny. */
  deny?: string;
}

/** A page with a small form that POSTs to `action` (same origin), like writeConfirmPage's. */
export function writeForm(ctx: Context, page: FormPage): void {
  const paragraphs = page.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('');
  const fields = page.fields
    .map(
      (f) =>
        `<p><label>${escapeHtml(f.label)}<br><input name="${escapeHtml(f.name)}" value="${escapeHtml(f.value)}" required autocomplete="off"></label></p>`,
    )
    .join('');
  const deny = page.deny ? ` <button type="submit" name="decision" value="deny">${escapeHtml(page.deny)}</button>` : '';
  writeHtml(
    ctx,
    200,
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'",
    page.title,
    `${paragraphs}<form method="post" action="${escapeHtml(page.action)}">${fields}<button type="submit" name="decision" value="approve">${escapeHtml(page.button)}</button>${deny}</form>`,
  );
}

/**
 * The SSO routes' dialect: a person's browser is on these URLs, so a refusal
 * is an HTML page saying why, not problem+json. Runs inside the
 * /v1 surface and answers before its problem+json handler sees the error.
 */
export function ssoPages(logger: Logger) {
  return async function ssoErrorPage(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (thrown) {
      const err = toStoreAwareError(thrown);
      // ctx.path, never the URL: the query holds the authorization code.
      if (!err.expose) logger.error({ err: thrown, path: ctx.path }, 'SSO request failed');
      else logger.info({ status: err.status, path: ctx.path, reason: err.message }, 'SSO sign-in refused');
      const title = TITLES[err.kind] ?? (err.status >= 500 ? 'Sign-in failed' : 'Sign-in refused');
      writePage(ctx, err.status, title, err.expose ? err.message : 'Something went wrong on our side. Try again in a moment.');
    }
  };
}
