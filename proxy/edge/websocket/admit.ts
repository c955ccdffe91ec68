import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from '../../../shared/node-http.js';
import type { Duplex } from 'node:stream';
import { toAppError, type AppError } from '../../../shared/errors.js';
import type { ResolvedKey } from '../../../shared/contract/keys.js';
import { sha256Hex } from '../../../shared/secrets.js';
import { decideKey } from '../../decide.js';
import { presentedKey } from '../../headers.js';
import type { Lookup } from '../../key-cache.js';
import { newCall } from '../../observe.js';
import { newRequestId } from '../../request-id.js';
import { errorBody } from '../../wire/errors.js';
import { lookupKey } from '../steps/key.js';
import type { EdgeDeps } from '../steps/step.js';

/** A socket's key as admitted: what its revocation is checked by. */
export interface SocketKey {
  hash: string;
  slug: string;
  key: ResolvedKey;
}

/**
 * The key of an upgrade, checked as an HTTP call's is and before the
 * upgrade completes: the admitted key, or the refusal to answer instead of
 * the 101 (so a caller without a valid key never holds a socket).
 */
export async function admitKey(deps: EdgeDeps, req: IncomingMessage, slug: string): Promise<SocketKey | AppError> {
  try {
    const key = await lookupKey(deps, req, 'responses', newCall(newRequestId(deps.now()), req));
    const decided = decideKey(key, slug, deps.now());
    if (!decided.ok) return decided.error;
    return { hash: sha256Hex(presentedKey(req.headers, 'x-api-key')!), slug, key: decided.key };
  } catch (err) {
    return toAppError(err);
  }
}

/** Whether the key a socket was admitted with still stands (undefined: it cannot be told right now, so the socket stays). */
export function keyStands(found: Lookup, sk: SocketKey, now: number): boolean | undefined {
  if (found.kind === 'unavailable') return undefined;
  return decideKey(found.kind === 'known' ? found.key : null, sk.slug, now).ok;
}

/** The refusal of an upgrade, in the OpenAI error shape with its status, on the raw socket (no 101 was sent). */
export function refuseOnSocket(socket: Duplex, err: AppError, now: number): void {
  const message = err.expose ? err.message : 'The proxy failed to handle this request.';
  const body = errorBody('responses', err.kind, message, err.code);
  const extra = Object.entries(err.headers ?? {})
    .map(([n, v]) => `${n}: ${v}\r\n`)
    .join('');
  socket.on('error', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `${extra}x-request-id: ${newRequestId(now)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
