import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg } from '../../support/control-plane.js';
import { startDataPlane, type DataPlane } from '../../support/data-plane.js';

/**
 * The whole path an admin and an SDK user take: console API (credits, team,
 * model access, key) → the key works on both formats → the spend shows in
 * the console → DELETE /v1/keys/{id} → refused everywhere within 2 s.
 */
describeEachStore('console to proxy: a key created in the console works on both formats until it is revoked', (store) => {
  let dp: DataPlane;
  before(async () => {
    dp = await startDataPlane(store);
  });
  after(() => dp.close());

  it('create through the console, call with both SDKs, see the spend, revoke, refused within 2 s', async () => {
    const org = await seedOrg(dp.cp.deps);
    const token = org.console_token;
    expect((await call(`${dp.cp.url}/v1/workspaces/${org.workspace_id}/credits`, { token, body: { amount_usd: 10 } })).status).to.equal(200);
    const team = await call(`${dp.cp.url}/v1/workspaces/${org.workspace_id}/teams`, { token, body: { name: 'Platform' } });
    expect(team.status).to.equal(201);
    expect((await call(`${dp.cp.url}/v1/teams/${team.body.id}/models`, { method: 'PUT', token, body: { models: ['tg/haiku'] } })).status).to.equal(
      200,
    );
    const created = await call(`${dp.cp.url}/v1/teams/${team.body.id}/keys`, { token, body: { kind: 'team', name: 'ci', budget_usd: 1, rpm: 100 } });
    expect(created.status).to.equal(201);
    const key: string = created.body.key;

    const openai = new OpenAI({ apiKey: key, baseURL: `${dp.proxy.url}/${org.workspace_slug}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: key, baseURL: `${dp.proxy.url}/${org.workspace_slug}/anthropic`, maxRetries: 0 });
    const chat = await openai.chat.completions.create({ model: 'tg/haiku', messages: [{ role: 'user', content: 'Hello.' }] });
    expect(chat.choices[0]!.message.content).to.match(/^tok1/);
    const msg = await anthropic.messages.create({ model: 'tg/haiku', max_tokens: 5, messages: [{ role: 'user', content: 'Hello.' }] });
    expect(msg.usage.output_tokens).to.equal(5);

    await dp.proxy.drain();
    const keys = await call(`${dp.cp.url}/v1/teams/${team.body.id}/keys`, { token });
    expect(keys.body[0].spend_usd).to.be.greaterThan(0);
    expect(keys.body[0].last_used_at).to.be.a('string');

    expect((await call(`${dp.cp.url}/v1/keys/${created.body.id}`, { method: 'DELETE', token })).status).to.equal(204);
    const start = Date.now();
    let refused = false;
    while (!refused && Date.now() - start <= 2000) {
      const e = await anthropic.messages
        .create({ model: 'tg/haiku', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
        .catch((err: unknown) => err);
      refused = e instanceof Anthropic.AuthenticationError;
      if (!refused) await new Promise((r) => setTimeout(r, 50));
    }
    expect(refused, 'refused within 2 s').to.equal(true);
    expect(
      await openai.chat.completions.create({ model: 'tg/haiku', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e),
    ).to.be.instanceOf(OpenAI.AuthenticationError);
  });
});
