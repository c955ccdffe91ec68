// LEAD: replace with secA's outbound guard (control-plane/services/outbound/) when merging;
// the delivery loop only needs a `WebhookSend` built on a dispatcher that refuses private targets at connect time.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { refusedTarget, type TargetPolicy } from './address-policy.js';
import type { WebhookSend } from './delivery.js';

class RefusedTarget extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedTarget';
  }
}

/**
 * An undici dispatcher that resolves the host itself, refuses the connection
 * when any address is not allowed by the policy, and connects to the address
 * it checked (TLS still verifies the host name): a name that resolves to a
 * public address when saved and to 127.0.0.1 when sent is refused at send
 * time, and a second lookup cannot swap the address after the check.
 */
export function guardedDispatcher(policy: TargetPolicy, timeoutMs: number): Agent {
  const base = buildConnector({ timeout: timeoutMs });
  const connect: buildConnector.connector = (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '');
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
    const addresses = isIP(host) ? Promise.resolve([{ address: host }]) : lookup(host, { all: true, verbatim: true });
    addresses.then(
      (found) => {
        for (const { address } of found) {
          const why = refusedTarget(address, port, policy);
          if (why) return callback(new RefusedTarget(`refused: ${why}`), null);
        }
        const first = found[0];
        if (!first) return callback(new RefusedTarget(`refused: ${host} resolves to no address`), null);
        base({ ...options, hostname: first.address, servername: isIP(host) ? undefined : host }, callback);
      },
      (err: Error) => callback(err, null),
    );
  };
  return new Agent({ connect, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
}

/** Sends one webhook POST through the guard; no redirect is followed (a redirect could point anywhere). */
export function guardedWebhookSend(policy: TargetPolicy, timeoutMs: number): WebhookSend {
  const dispatcher = guardedDispatcher(policy, timeoutMs);
  return async ({ url, headers, body }) => {
    const res = await request(url, { method: 'POST', headers, body, dispatcher, signal: AbortSignal.timeout(timeoutMs) });
    await res.body.dump();
    return { status: res.statusCode };
  };
}
