import { createHmac, randomBytes } from 'node:crypto';

/** A new endpoint's signing secret, shown once. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` under the endpoint's secret. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
