import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ControlPlaneDeps } from '../deps.js';
import { authOf, requireSession } from '../http/auth.js';
import { parseValid, readValid } from '../http/body.js';
import { createSecretSealer } from '../services/sso/secrets.js';
import { MAX_WEBHOOK_URL_CHARS } from '../services/alerts/url-check.js';
import { addAlertWebhook, listAlertEvents, removeAlertWebhook, setBalanceAlert, showAlertSettings } from '../services/alerts/settings.js';

/** Balances are numeric with seventeen integer digits; bound the threshold well inside. */
const MAX_THRESHOLD_USD = 1_000_000_000;

export const alertSettingsBody = z.strictObject({
  balance_below_usd: z.number().min(0).max(MAX_THRESHOLD_USD).nullable(),
});

export const newWebhookBody = z.strictObject({ url: z.string().trim().min(1).max(MAX_WEBHOOK_URL_CHARS) });

export const alertEventsQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(50) });

/**
 * Money alerts of a workspace (owner or admin): GET/PUT /v1/workspaces/:id/alerts
 * (the balance threshold and the webhooks), POST …/alerts/webhooks (answers the
 * signing secret once), DELETE …/alerts/webhooks/:webhook_id, GET …/alerts/events.
 */
export function alertsRoutes(deps: ControlPlaneDeps): Router {
  const router = new Router();
  const session = requireSession(deps);
  const sealer = createSecretSealer(deps.config);

  router.get('/v1/workspaces/:workspace_id/alerts', session, async function showAlerts(ctx: Context) {
    ctx.body = await showAlertSettings(deps, authOf(ctx), ctx.params.workspace_id);
  });

  router.put('/v1/workspaces/:workspace_id/alerts', session, async function setAlerts(ctx: Context) {
    const input = await readValid(ctx, alertSettingsBody);
    ctx.body = await setBalanceAlert(deps, authOf(ctx), ctx.params.workspace_id, input.balance_below_usd);
  });

  router.post('/v1/workspaces/:workspace_id/alerts/webhooks', session, async function addWebhook(ctx: Context) {
    const input = await readValid(ctx, newWebhookBody);
    ctx.status = 201;
    ctx.body = await addAlertWebhook(deps, sealer, authOf(ctx), ctx.params.workspace_id, input.url);
  });

  router.delete('/v1/workspaces/:workspace_id/alerts/webhooks/:webhook_id', session, async function removeWebhook(ctx: Context) {
    await removeAlertWebhook(deps, authOf(ctx), ctx.params.workspace_id, ctx.params.webhook_id);
    ctx.status = 204;
  });

  router.get('/v1/workspaces/:workspace_id/alerts/events', session, async function listEvents(ctx: Context) {
    const q = parseValid(alertEventsQuery, ctx.query);
    ctx.body = { events: await listAlertEvents(deps, authOf(ctx), ctx.params.workspace_id, q.limit) };
  });

  return router;
}
