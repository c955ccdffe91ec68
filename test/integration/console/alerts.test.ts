import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { recordUsage } from '../../../control-plane/services/data-plane/usage.js';
import { targetPolicy } from '../../../control-plane/services/alerts/outbound-policy.js';
import { startAlertDelivery, type AlertDelivery } from '../../../control-plane/services/alerts/delivery.js';
import { guardedWebhookSend } from '../../../control-plane/services/alerts/webhook-send.js';
import { webhookSignature } from '../../../control-plane/services/alerts/signing.js';
import { createSecretSealer } from '../../../control-plane/services/sso/secrets.js';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';
import { addMember, ok } from '../../support/console.js';

interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
}

/** A webhook receiver on loopback that can be down (not listening), failing (5xx) or up. */
class Receiver {
  received: Received[] = [];
  failNext = 0;
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (this.failNext > 0) {
          this.failNext -= 1;
          res.writeHead(500).end();
          return;
        }
        this.received.push({
          id: String(req.headers['x-tollgate-event-id']),
          timestamp: String(req.headers['x-tollgate-timestamp']),
          signature: String(req.headers['x-tollgate-signature']),
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server!.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** The distinct events received, in order of first arrival. */
  events(): { id: string; type: string; data: Record<string, unknown> }[] {
    const seen = new Map<string, { id: string; type: string; data: Record<string, unknown> }>();
    for (const r of this.received) if (!seen.has(r.id)) seen.set(r.id, JSON.parse(r.body));
    return [...seen.values()];
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const FAST = { ALERTS_ALLOW_PRIVATE_URLS: 'true', ALERTS_POLL_MS: '20', ALERTS_RETRY_BASE_MS: '50', ALERTS_RETRY_MAX_MS: '200' };

describeEachStore('money alerts: webhooks for budget and balance crossings', (store) => {
  let cp: TestControlPlane;
  let loop: AlertDelivery | undefined;
  let receiver: Receiver;
  let token: string;
  let workspaceId: string;
  let keyId: string;
  let secret: string;
  let alertsUrl: string;

  const startLoop = () => {
    loop = startAlertDelivery(cp.deps, createSecretSealer(cp.deps.config), guardedWebhookSend(targetPolicy(cp.deps.config), 2_000));
  };
  const spend = (usd: number, requestId = `req_${randomUUID()}`) =>
    recordUsage(cp.deps, [
      {
        request_id: requestId,
        key_id: keyId,
        model: 'tg/sonnet',
        input_tokens: 1,
        output_tokens: 1,
        cost_micros: Math.round(usd * 1e6),
        cost_femtos: `${BigInt(Math.round(usd * 1e6)) * 1_000_000_000n}`,
      },
    ]);
  const eventRows = async () => (await ok(`${alertsUrl}/events`, { token })).events;

  before(async () => {
    cp = await startTestControlPlane(store.db, { env: FAST });
  });
  after(async () => {
    await loop?.stop();
    await cp?.close();
  });

  beforeEach(async () => {
    receiver = new Receiver();
    await receiver.start();
    const boot = await seedOrg(cp.deps);
    token = boot.console_token;
    workspaceId = boot.workspace_id;
    alertsUrl = `${cp.url}/v1/workspaces/${workspaceId}/alerts`;
    await ok(`${cp.url}/v1/workspaces/${workspaceId}/credits`, { token, body: { amount_usd: 10 } });
    const team = await ok(`${cp.url}/v1/workspaces/${workspaceId}/teams`, { token, body: { name: 'Platform' } }, 201);
    keyId = (await ok(`${cp.url}/v1/teams/${team.id}/keys`, { token, body: { kind: 'team', name: 'ci', budget_usd: 1 } }, 201)).id;
    await ok(alertsUrl, { token, method: 'PUT', body: { balance_below_usd: 8.5 } });
    const hook = await ok(`${alertsUrl}/webhooks`, { token, body: { url: receiver.url } }, 201);
    expect(hook.secret).to.match(/^whsec_/);
    secret = hook.secret;
    startLoop();
  });
  afterEach(async () => {
    await loop?.stop();
    loop = undefined;
    await receiver.stop();
  });

  it('sends one signed event per threshold crossed: 50, 80, 100 % of the budget and the balance threshold', async () => {
    await spend(0.4); // 40 %: nothing
    await spend(0.2); // 60 %: 50
    await spend(0.3); // 90 %: 80
    await spend(0.05); // 95 %: nothing
    await spend(1); // 195 %: 100, and the balance 10 → 8.05 falls below 8.5
    await spend(1); // nothing new
    await until('four events', () => receiver.events().length >= 4);
    await new Promise((r) => setTimeout(r, 200));
    const events = receiver.events();
    expect(events).to.have.length(4);
    expect(
      events
        .filter((e) => e.type === 'key.budget_crossed')
        .map((e) => e.data.threshold_percent)
        .sort(),
    ).to.deep.equal([100, 50, 80]);
    const balance = events.find((e) => e.type === 'workspace.balance_below')!;
    expect(balance.data).to.include({ workspace_id: workspaceId, threshold_usd: 8.5, balance_usd: 8.05 });
    expect(events.find((e) => e.data.threshold_percent === 100)!.data).to.include({ key_id: keyId, key_name: 'ci', budget_usd: 1, spend_usd: 1.95 });
    expect(receiver.received).to.have.length(4);
    for (const r of receiver.received) {
      expect(r.signature).to.equal(webhookSignature(secret, r.timestamp, r.body));
      expect(r.signature).to.not.equal(webhookSignature('whsec_other', r.timestamp, r.body));
      expect(JSON.parse(r.body).id).to.equal(r.id);
      expect(Math.abs(Number(r.timestamp) - Date.now() / 1000)).to.be.below(60);
    }
    const rows = await eventRows();
    expect(rows).to.have.length(4);
    for (const e of rows) expect(e.deliveries).to.have.length(1);
    expect(rows.every((e: { deliveries: { status: string }[] }) => e.deliveries[0]!.status === 'delivered')).to.equal(true);
  });

  it('a receiver down for a while gets every event once it is back, and the console shows the retries', async () => {
    await receiver.stop();
    await spend(0.5);
    await spend(0.3);
    await until('a failed attempt', async () => {
      const rows = await eventRows();
      return rows.length === 2 && rows.every((e: { deliveries: { attempts: number }[] }) => e.deliveries[0]!.attempts >= 2);
    });
    const failing = (await eventRows())[0].deliveries[0];
    expect(failing).to.include({ status: 'retrying', delivered_at: null });
    expect(failing.last_error).to.be.a('string').and.not.equal('');
    await receiver.start();
    await until('both events', () => receiver.events().length === 2);
    expect(
      receiver
        .events()
        .map((e) => e.data.threshold_percent)
        .sort(),
    ).to.deep.equal([50, 80]);
    await until('delivered in the console', async () =>
      (await eventRows()).every((e: { deliveries: { status: string }[] }) => e.deliveries[0]!.status === 'delivered'),
    );
  });

  it('a restart records no new event for a crossing already recorded, and a repeated delivery carries the same event id', async () => {
    receiver.failNext = 1;
    const requestId = `req_${randomUUID()}`;
    await spend(0.6, requestId);
    await until('the event delivered after one failure', () => receiver.received.length === 1);
    const [first] = receiver.received;
    // Stop the loop and the control plane, start both again over the same store, and replay the report (a proxy's outbox after a crash).
    await loop!.stop();
    await cp.close();
    cp = await startTestControlPlane(store.db, { env: FAST });
    alertsUrl = `${cp.url}/v1/workspaces/${workspaceId}/alerts`;
    const [again] = await spend(0.6, requestId);
    expect(again!.recorded).to.equal(false);
    startLoop();
    await new Promise((r) => setTimeout(r, 300));
    expect(await eventRows()).to.have.length(1);
    expect(receiver.events()).to.have.length(1);
    expect(receiver.received[0]!.id).to.equal(first!.id);
    // At-least-once: had the acknowledgement been lost, the retry would carry the same id. Make one go out again and compare.
    await store.db.query(`UPDATE alert_deliveries SET delivered_at = NULL, next_attempt_at = now() WHERE event_id = $1`, [first!.id]);
    await until('the repeat', () => receiver.received.length === 2);
    expect(receiver.received[1]!.id).to.equal(first!.id);
    expect(receiver.received[1]!.body).to.equal(first!.body);
  });

  it('members cannot read or change alerts; bad input is a 400 naming the field', async () => {
    const member = await addMember(cp.deps, (await ok(`${cp.url}/v1/me`, { token })).memberships[0].org_id, { role: 'member' });
    expect((await call(alertsUrl, { token: member.token })).status).to.equal(403);
    const bad = await call(`${alertsUrl}/webhooks`, { token, body: { url: 'not a url' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.detail).to.match(/url/);
    expect((await call(alertsUrl, { token, method: 'PUT', body: { balance_below_usd: -1 } })).status).to.equal(400);
    const list = await ok(alertsUrl, { token });
    expect(list.webhooks).to.have.length(1);
    expect(JSON.stringify(list)).to.not.include(secret);
    expect((await call(`${alertsUrl}/webhooks/${list.webhooks[0].id}`, { token, method: 'DELETE' })).status).to.equal(204);
    expect((await call(`${alertsUrl}/webhooks/${list.webhooks[0].id}`, { token, method: 'DELETE' })).status).to.equal(404);
  });
});

describeEachStore('money alerts: no webhook to private or loopback targets unless the operator allows it', (store) => {
  let cp: TestControlPlane;
  let receiver: Receiver;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    receiver = new Receiver();
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
    await cp?.close();
  });

  it('refuses loopback, private, link-local and http URLs at save time', async () => {
    const boot = await seedOrg(cp.deps);
    const url = `${cp.url}/v1/workspaces/${boot.workspace_id}/alerts/webhooks`;
    for (const target of [
      receiver.url,
      `https://127.0.0.1:${receiver.port}/hook`,
      'https://localhost/hook',
      'https://10.1.2.3/hook',
      'https://192.168.1.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[fd00::1]/hook',
      'https://user:pw@example.com/hook',
    ]) {
      const res = await call(url, { token: boot.console_token, body: { url: target } });
      expect(res.status, target).to.equal(400);
      expect(res.headers.get('content-type')).to.match(/problem\+json/);
    }
  });

  it('a plain-http URL is refused naming the switch that allows it', async () => {
    const boot = await seedOrg(cp.deps);
    const res = await call(`${cp.url}/v1/workspaces/${boot.workspace_id}/alerts/webhooks`, {
      token: boot.console_token,
      body: { url: 'http://hooks.example.com/tollgate' },
    });
    expect(res.status).to.equal(400);
    expect((res.body as { detail: string }).detail).to.equal(
      'url: must be an https URL (plain http is allowed for on-premises receivers when the operator sets ALERTS_ALLOW_PRIVATE_URLS=true)',
    );
  });

  it('refuses them at connect time too, and with the allowance still refuses the service’s own ports', async () => {
    const strict = guardedWebhookSend({ allowPrivate: false, ownPorts: [] }, 2_000);
    for (const target of [receiver.url, `http://localhost:${receiver.port}/hook`]) {
      let error: Error | undefined;
      await strict({ url: target, headers: {}, body: '{}' }).catch((err: Error) => (error = err));
      expect(error, target).to.be.instanceOf(Error);
      expect(String(error!.message) + String((error!.cause as Error | undefined)?.message)).to.match(/refused/);
    }
    expect(receiver.received).to.have.length(0);
    const allowed = guardedWebhookSend({ allowPrivate: true, ownPorts: [] }, 2_000);
    expect((await allowed({ url: receiver.url, headers: {}, body: '{}' })).status).to.equal(204);
    const own = guardedWebhookSend({ allowPrivate: true, ownPorts: [receiver.port] }, 2_000);
    expect(
      await own({ url: receiver.url, headers: {}, body: '{}' }).then(
        () => 'sent',
        () => 'refused',
      ),
    ).to.equal('refused');
  });
});
