import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pool } from 'undici';
import type { Logger } from '../shared/logger.js';

/**
 * Claude Code's `/login` talks to the gateway address it calls models at
 * (the proxy, `{base}` = `/{ws}/anthropic`): it fetches
 * `{base}/.well-known/oauth-authorization-server` and, since the control
 * plane's endpoints are on another origin, falls back to
 * `{base}/oauth/device_authorization` and `{base}/oauth/token`. These are
 * the control plane's public sign-in endpoints; the proxy passes them on
 * unchanged (no data-plane token), and logs nothing of them: bodies carry
 * device codes and tokens.
 */
const SIGNIN_PATH = /^(?:\/[^/]+\/anthropic(?:\/v1)?)?(\/\.well-known\/oauth-authorization-server|\/oauth\/(?:device_authorization|token|revoke))$/;
const MAX_BODY_BYTES = 8 * 1024;
const PASSED_HEADERS = ['content-type', 'user-agent', 'accept'] as const;

export interface SigninForwarder {
  /** True when the request was a sign-in request and is being answered. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  close(): Promise<void>;
}

async function readLimited(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function answer(res: ServerResponse, status: number, body: string, contentType = 'application/json'): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) }).end(body);
}

export function createSigninForwarder(controlPlaneUrl: string, logger: Logger): SigninForwarder {
  const url = new URL(controlPlaneUrl);
  const pathBase = url.pathname.replace(/\/+$/, '');
  const pool = new Pool(url.origin, { connect: { timeout: 1_000 }, headersTimeout: 10_000, bodyTimeout: 10_000 });

  async function forward(req: IncomingMessage, res: ServerResponse, target: string): Promise<void> {
    const body = req.method === 'POST' ? await readLimited(req) : undefined;
    if (req.method === 'POST' && body === undefined) {
      answer(res, 413, JSON.stringify({ error: 'invalid_request', error_description: `Request body is larger than ${MAX_BODY_BYTES} bytes.` }));
      return;
    }
    const headers: Record<string, string> = {};
    for (const h of PASSED_HEADERS) {
      const v = req.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    try {
      const upstream = await pool.request({ method: req.method === 'POST' ? 'POST' : 'GET', path: `${pathBase}${target}`, headers, body });
      const text = await upstream.body.text();
      const type = upstream.headers['content-type'];
      answer(res, upstream.statusCode, text, typeof type === 'string' ? type : 'application/json');
    } catch (err) {
      logger.warn({ err: (err as Error).message, path: target }, 'sign-in request could not reach the control plane');
      answer(
        res,
        503,
        JSON.stringify({ error: 'temporarily_unavailable', error_description: 'The sign-in service is unreachable; try again shortly.' }),
      );
    }
  }

  return {
    handle(req, res) {
      const raw = req.url ?? '/';
      const q = raw.indexOf('?');
      const m = SIGNIN_PATH.exec(q < 0 ? raw : raw.slice(0, q));
      if (!m) return false;
      if (req.method !== 'GET' && req.method !== 'POST') {
        answer(res, 405, JSON.stringify({ error: 'invalid_request', error_description: 'Use GET or POST.' }));
        return true;
      }
      void forward(req, res, m[1]!);
      return true;
    },
    close: () => pool.close(),
  };
}
