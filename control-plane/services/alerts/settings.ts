import { randomUUID } from 'node:crypto';
import { notFound } from '../../../shared/errors.js';
import type { ControlPlaneDeps } from '../../deps.js';
import { audit_insert } from '../../stores/audit.js';
import {
  alert_endpoint_delete,
  alert_endpoint_insert,
  alert_endpoint_list,
  alert_event_list,
  workspace_alert_threshold_get,
  workspace_alert_threshold_set,
} from '../../stores/alerts.js';
import { loadWorkspace } from '../auth/access.js';
import { actorOf, assertAdmin, normalizeId, type ConsoleAuth } from '../auth/console-auth.js';
import type { SecretSealer } from '../sso/secrets.js';
import { targetPolicy } from './outbound-policy.js';
import { endpointSecretContext } from './delivery.js';
import { newWebhookSecret } from './signing.js';
import { assertWebhookUrl } from './url-check.js';

export interface AlertWebhook {
  id: string;
  url: string;
  created_at: string;
}

export interface AlertSettingsView {
  /** Alert when the workspace balance falls below this (USD); null: no balance alert. */
  balance_below_usd: number | null;
  webhooks: AlertWebhook[];
}

export type DeliveryStatus = 'delivered' | 'pending' | 'retrying';

export interface AlertEventView {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
  deliveries: {
    webhook_id: string;
    url: string;
    status: DeliveryStatus;
    attempts: number;
    last_status: number | null;
    last_error: string | null;
    delivered_at: string | null;
    next_attempt_at: string | null;
  }[];
}

function webhookOf(row: { id: string; url: string; created_at: Date }): AlertWebhook {
  return { id: row.id, url: row.url, created_at: new Date(row.created_at).toISOString() };
}

/** Alert settings are the workspace admin's: members see none of them. */
async function adminWorkspace(deps: ControlPlaneDeps, auth: ConsoleAuth, rawWorkspaceId: string | undefined) {
  const workspace = await loadWorkspace(deps.db, auth, rawWorkspaceId);
  assertAdmin(auth);
  return workspace;
}

export async function showAlertSettings(deps: ControlPlaneDeps, auth: ConsoleAuth, rawWorkspaceId: string | undefined): Promise<AlertSettingsView> {
  const w = await adminWorkspace(deps, auth, rawWorkspaceId);
  const [threshold, endpoints] = await Promise.all([workspace_alert_threshold_get(deps.db, w.id), alert_endpoint_list(deps.db, w.id)]);
  return { balance_below_usd: threshold, webhooks: endpoints.map(webhookOf) };
}

export async function setBalanceAlert(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawWorkspaceId: string | undefined,
  balanceBelowUsd: number | null,
): Promise<AlertSettingsView> {
  const w = await adminWorkspace(deps, auth, rawWorkspaceId);
  await deps.db.transaction(async (tx) => {
    await workspace_alert_threshold_set(tx, w.id, balanceBelowUsd);
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'alerts.balance_threshold',
      target_type: 'workspace',
      target_id: w.id,
      detail: { balance_below_usd: balanceBelowUsd },
      now: deps.clock.now(),
    });
  });
  return showAlertSettings(deps, auth, w.id);
}

/** Adds a webhook; the answer carries its signing secret, shown here and nowhere else. */
export async function addAlertWebhook(
  deps: ControlPlaneDeps,
  sealer: SecretSealer,
  auth: ConsoleAuth,
  rawWorkspaceId: string | undefined,
  rawUrl: string,
): Promise<AlertWebhook & { secret: string }> {
  const w = await adminWorkspace(deps, auth, rawWorkspaceId);
  const url = await assertWebhookUrl(rawUrl, targetPolicy(deps.config), [deps.config.publicBaseUrl, deps.config.edgeBaseUrl]);
  const id = randomUUID();
  const secret = newWebhookSecret();
  const secretSealed = sealer.seal(secret, endpointSecretContext(id));
  const now = deps.clock.now();
  const row = await deps.db.transaction(async (tx) => {
    const inserted = await alert_endpoint_insert(tx, { id, workspace_id: w.id, url, secret_sealed: secretSealed, now });
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'alerts.webhook_add',
      target_type: 'alert_webhook',
      target_id: id,
      detail: { workspace_id: w.id, url },
      now,
    });
    return inserted;
  });
  return { ...webhookOf(row), secret };
}

export async function removeAlertWebhook(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawWorkspaceId: string | undefined,
  rawWebhookId: string | undefined,
): Promise<void> {
  const w = await adminWorkspace(deps, auth, rawWorkspaceId);
  const id = normalizeId(rawWebhookId, 'Webhook');
  await deps.db.transaction(async (tx) => {
    if (!(await alert_endpoint_delete(tx, w.id, id))) throw notFound('Webhook');
    await audit_insert(tx, {
      org_id: auth.orgId,
      actor: actorOf(auth),
      action: 'alerts.webhook_remove',
      target_type: 'alert_webhook',
      target_id: id,
      detail: { workspace_id: w.id },
      now: deps.clock.now(),
    });
  });
}

/** The latest alert events, newest first, with where each was sent and how that went. */
export async function listAlertEvents(
  deps: ControlPlaneDeps,
  auth: ConsoleAuth,
  rawWorkspaceId: string | undefined,
  limit: number,
): Promise<AlertEventView[]> {
  const w = await adminWorkspace(deps, auth, rawWorkspaceId);
  const rows = await alert_event_list(deps.db, w.id, limit);
  return rows.map((e) => ({
    id: e.id,
    type: e.type,
    created_at: new Date(e.created_at).toISOString(),
    data: e.payload,
    deliveries: e.deliveries.map((d) => ({
      webhook_id: d.endpoint_id,
      url: d.url,
      status: d.delivered_at ? 'delivered' : d.attempts > 0 ? 'retrying' : 'pending',
      attempts: d.attempts,
      last_status: d.last_status,
      last_error: d.last_error,
      delivered_at: d.delivered_at ? new Date(d.delivered_at).toISOString() : null,
      next_attempt_at: d.delivered_at ? null : new Date(d.next_attempt_at).toISOString(),
    })),
  }));
}
