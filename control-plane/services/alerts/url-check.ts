import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { invalidInput } from '../../../shared/errors.js';
import { addressRefusal, urlRefusal, type OutboundPolicy } from '../outbound/guard.js';

export const MAX_WEBHOOK_URL_CHARS = 2000;

/** Where the operator can lift the private-address refusal, said when it is the reason. */
const PRIVATE_HINT = ' (set ALERTS_ALLOW_PRIVATE_URLS=true for on-premises receivers)';
/** The same switch allows plain http: a receiver on the local network rarely has a certificate. */
const HTTP_HINT = ' (plain http is allowed for on-premises receivers when the operator sets ALERTS_ALLOW_PRIVATE_URLS=true)';

/** The operator's switch, named when it would lift this refusal. */
function refusalHint(refusal: string): string {
  if (refusal.includes('private')) return PRIVATE_HINT;
  if (refusal.includes('https')) return HTTP_HINT;
  return '';
}

/**
 * The save-time check of a webhook URL: the outbound guard's URL rules (https,
 * or http where private targets are allowed; no credentials; no private
 * literal), not the service's own public addresses, and a host that resolves
 * only to addresses the policy allows. The guard checks the addresses again
 * when each delivery connects, since a name may resolve elsewhere later.
 */
export async function assertWebhookUrl(raw: string, policy: OutboundPolicy, ownOrigins: readonly string[]): Promise<string> {
  const hint = policy.allowPrivate ? '' : PRIVATE_HINT;
  const refusal = urlRefusal(raw, policy);
  if (refusal) throw invalidInput(`url: ${refusal}${policy.allowPrivate ? '' : refusalHint(refusal)}`);
  const url = new URL(raw);
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
    const why = addressRefusal(address, port, policy);
    if (why) throw invalidInput(`url: ${host} ${why}${policy.allowPrivate ? '' : hint}`);
  }
  return url.toString();
}
