import type { ControlPlaneDeps } from '../../deps.js';
import { alert_delivery_claim_due, alert_delivery_record_attempt, type DueDeliveryRow } from '../../stores/alerts.js';
import type { SecretSealer } from '../sso/secrets.js';
import { webhookSignature } from './signing.js';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends one webhook POST and answers the receiver's status; throws when no answer came (refused target, network, timeout). */
export type WebhookSend = (request: WebhookRequest) => Promise<{ status: number }>;

/** Deliveries one pass claims at most; the next pass takes the rest. */
const BATCH = 50;
/** Kept on the row so the console can say why; a receiver's error text is not ours to keep whole. */
const MAX_ERROR_CHARS = 300;

export function endpointSecretContext(endpointId: string): string {
  return `alert-endpoint:${endpointId}`;
}

/** The event as the receiver gets it: the same bytes on every delivery of it. */
export function eventBody(row: Pick<DueDeliveryRow, 'event_id' | 'type' | 'payload' | 'created_at'>): string {
  return JSON.stringify({ id: row.event_id, type: row.type, created_at: new Date(row.created_at).toISOString(), data: row.payload });
}

/** The wait before attempt n+1 after n failed ones: doubling from the base, capped. */
export function retryDelayMs(failedAttempts: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(failedAttempts - 1, 30));
}

async function attempt(deps: ControlPlaneDeps, sealer: SecretSealer, send: WebhookSend, row: DueDeliveryRow): Promise<void> {
  const body = eventBody(row);
  let status: number | null = null;
  let error: string | null = null;
  try {
    const secret = sealer.unseal(row.secret_sealed, endpointSecretContext(row.endpoint_id));
    const timestamp = String(Math.floor(deps.clock.now().getTime() / 1000));
    const answer = await send({
      url: row.url,
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Tollgate-Alerts/1',
        'x-tollgate-event-id': row.event_id,
        'x-tollgate-timestamp': timestamp,
        'x-tollgate-signature': webhookSignature(secret, timestamp, body),
      },
    });
    status = answer.status;
    if (status < 200 || status > 299) error = `receiver answered ${status}`;
  } catch (err) {
    error = (err as Error).message.slice(0, MAX_ERROR_CHARS) || 'no answer';
  }
  const now = deps.clock.now();
  const delivered = error === null;
  const failed = row.attempts + 1;
  await alert_delivery_record_attempt(deps.db, {
    event_id: row.event_id,
    endpoint_id: row.endpoint_id,
    status,
    error,
    delivered_at: delivered ? now : null,
    next_attempt_at: delivered ? now : new Date(now.getTime() + retryDelayMs(failed, deps.config.alerts.retryBaseMs, deps.config.alerts.retryMaxMs)),
  });
  if (!delivered)
    deps.logger.warn({ event_id: row.event_id, endpoint_id: row.endpoint_id, attempts: failed, error }, 'alert delivery failed; will retry');
}

/** One pass: claims the due deliveries and attempts each once, concurrently. Answers how many it attempted. */
export async function deliverDue(deps: ControlPlaneDeps, sealer: SecretSealer, send: WebhookSend): Promise<number> {
  const now = deps.clock.now();
  // The lease outlasts one attempt, so a crash mid-attempt only delays that delivery to the lease's end.
  const leaseUntil = new Date(now.getTime() + deps.config.alerts.timeoutMs * 2 + 5_000);
  const due = await alert_delivery_claim_due(deps.db, now, leaseUntil, BATCH);
  await Promise.all(due.map((row) => attempt(deps, sealer, send, row)));
  return due.length;
}

export interface AlertDelivery {
  /** Stops after the pass in progress, if any. */
  stop(): Promise<void>;
}

/**
 * The delivery loop, apart from settlement: settlement only writes outbox
 * rows in its own transaction, and this loop sends them, so a receiver that
 * is slow or down delays nothing but its own alerts. A full pass goes again
 * at once; otherwise it sleeps `pollMs`.
 */
export function startAlertDelivery(deps: ControlPlaneDeps, sealer: SecretSealer, send: WebhookSend): AlertDelivery {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const pass = async (): Promise<void> => {
    let attempted = 0;
    try {
      attempted = await deliverDue(deps, sealer, send);
    } catch (err) {
      if (!stopped) deps.logger.error({ err }, 'alert delivery pass failed');
    }
    if (!stopped) timer = setTimeout(tick, attempted >= BATCH ? 0 : deps.config.alerts.pollMs).unref();
  };
  const tick = () => {
    running = pass();
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
