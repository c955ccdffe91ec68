import SwaggerParser from '@apidevtools/swagger-parser';
import { expect } from 'chai';
import { consoleRouters } from '../../../control-plane/console/index.js';
import { OPERATIONS, routesOf } from '../../../control-plane/console/openapi.js';
import { ssoRouters } from '../../../control-plane/sso/index.js';
import { describeEachStore } from '../../support/stores.js';
import { call, seedOrg, startTestControlPlane, type TestControlPlane } from '../../support/control-plane.js';

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<string, { operationId: string; requestBody?: { content: Record<string, { schema: Record<string, unknown> }> }; security?: unknown[] }>
  >;
};

describeEachStore('console API: /v1/openapi.json is the document of the routes that run', (store) => {
  let cp: TestControlPlane;
  let doc: Doc;
  before(async () => {
    cp = await startTestControlPlane(store.db);
    const res = await call(`${cp.url}/v1/openapi.json`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    doc = res.body as Doc;
  });
  after(() => cp.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).to.equal('3.1.0');
    await SwaggerParser.validate(structuredClone(doc) as never);
  });

  it('every registered console route is in it with its method, and nothing else is', () => {
    const registered = routesOf([...ssoRouters(cp.deps), ...consoleRouters(cp.deps)]).map(
      (r) => `${r.method} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')} ${r.handler}`,
    );
    registered.push('get /v1/openapi.json showOpenApi');
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => `${method} ${path} ${op.operationId}`),
    );
    expect(documented.sort()).to.deep.equal(registered.sort());
    expect(Object.keys(OPERATIONS).sort()).to.deep.equal(documented.map((d) => d.split(' ')[2]).sort());
  });

  it("a body's schema is the one its handler validates with: what it forbids, the route refuses", async () => {
    const schema = doc.paths['/v1/workspaces/{workspace_id}/teams']!.post!.requestBody!.content['application/json']!.schema;
    expect(schema).to.include({ type: 'object', additionalProperties: false });
    expect(schema.required).to.deep.equal(['name']);
    const keySchema = doc.paths['/v1/teams/{team_id}/keys']!.post!.requestBody!.content['application/json']!.schema as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(keySchema.properties).sort()).to.deep.equal(['budget_period', 'budget_usd', 'expires_at', 'kind', 'name', 'rpm', 'tpm']);

    const org = await seedOrg(cp.deps);
    const teams = `${cp.url}/v1/workspaces/${org.workspace_id}/teams`;
    expect((await call(teams, { token: org.console_token, body: { name: 'Core', colour: 'red' } })).status).to.equal(400);
    expect((await call(teams, { token: org.console_token, body: {} })).status).to.equal(400);
    expect((await call(teams, { token: org.console_token, body: { name: 'Core' } })).status).to.equal(201);
  });

  it('operations that need a session say so; signing in does not', () => {
    expect(doc.paths['/v1/me']!.get!.security).to.have.length(2);
    expect(doc.paths['/v1/auth/session']!.post!.security).to.equal(undefined);
  });
});
