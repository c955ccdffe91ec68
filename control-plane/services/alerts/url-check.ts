import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { invalidInput } from '../../../shared/errors.js';
import { refusedTarget, type TargetPolicy } from './address-policy.js';

export const MAX_WEBHOOK_URL_CHARS = 2000;

/**
 * The save-time check of a webhook URL: https (http only where private
 * targets are allowed), no credentials in it, not the service's own public
 * addresses, and a host that resolves only to addresses the policy allows.
 * The same address check runs again when each delivery connects, since a
 * name may resolve elsewhere later.
 */
export async function assertWebhookUrl(raw: string, policy: TargetPolicy, ownOrigins: readonly string[]): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidInput('url: not an absolute URL');
  }
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) throw invalidInput('url: must be https');
  if (url.username || url.password) throw invalidInput('url: must not carry a user name or password');
  if (ownOrigins.some((o) => new URL(o).origin === url.origin)) throw invalidInput("url: must not point at this service's own addresses");
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    throw invalidInput(`url: ${host} does not resolve`);
  }
  for (const address of addresses) {
    const why = refusedTarget(address, port, policy);
    if (why) throw invalidInput(`url: ${why}`);
  }
  return url.toString();
}
