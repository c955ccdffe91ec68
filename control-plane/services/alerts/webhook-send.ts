import { request } from 'undici';
import { createGuardedDispatcher, type OutboundPolicy } from '../outbound/guard.js';
import type { WebhookSend } from './delivery.js';

/** Sends one webhook POST through the outbound guard; no redirect is followed (a redirect could point anywhere). */
export function guardedWebhookSend(policy: OutboundPolicy, timeoutMs: number): WebhookSend {
  const dispatcher = createGuardedDispatcher(policy, { connectTimeoutMs: timeoutMs, timeoutMs });
  return async ({ url, headers, body }) => {
    const res = await request(url, { method: 'POST', headers, body, dispatcher, signal: AbortSignal.timeout(timeoutMs) });
    await res.body.dump();
    return { status: res.statusCode };
  };
}
