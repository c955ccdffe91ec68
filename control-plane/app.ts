import Koa from 'koa';
import type { Server } from 'node:http';
import type { ControlPlaneDeps } from './deps.js';
import { problemErrors } from './http/problem.js';
import { surface } from './http/surface.js';
import { consoleRouters } from './console/index.js';
import { openApiRoutes } from './console/openapi.js';
import { scimSurface } from './scim/index.js';
import { ssoRouters } from './sso/index.js';
import { gatewaySigninSurface } from './gateway-signin/index.js';
import { internalSurface } from './internal/index.js';
import { webRouters } from './web/index.js';
import { localAdminRoutes } from './local-admin.js';
import { httpMetrics, type ControlPlaneMetrics } from './metrics.js';
import { probes } from './http/probes.js';

/** A surface whose routers each handle their own errors. */
async function passThrough(_ctx: Koa.Context, next: Koa.Next): Promise<void> {
  await next();
}

export interface ControlPlane {
  app: Koa;
  /** Listens on `port` (0 for any) and resolves once ready. */
  listen(port: number, host?: string): Promise<Server>;
  /** Ends every proxy's change stream (shutdown: they are not calls in flight, and proxies reconnect). */
  endChangeStreams(): void;
}

export interface ControlPlaneOptions {
  /** Secret of the CLI's local bootstrap route (embedded store only). */
  localSecret?: string;
  /** Counts and times requests (absent with METRICS_ENABLED=false). */
  metrics?: ControlPlaneMetrics;
  /** True once shutdown has begun: /readyz then says not ready. */
  closing?: () => boolean;
}

/**
 * Builds the control plane. Each surface has its own dialect: SCIM errors
 * under /v1/scim, problem+json for the rest of /v1, the proxy's internal
 * API under /internal, and the web console's pages everywhere else.
 */
export function createControlPlane(deps: ControlPlaneDeps, options: ControlPlaneOptions = {}): ControlPlane {
  const app = new Koa({ proxy: false });
  app.silent = true;

  app.use(probes(deps, options.closing ?? (() => false)));
  if (options.metrics) app.use(httpMetrics(options.metrics));

  const scim = scimSurface(deps);
  const internal = internalSurface(deps);
  app.use(surface('/v1/scim/', scim.errors, scim.routers));
  app.use(surface('/internal/', internal.errors, internal.routers));
  // Claude Code's /login: discovery at the root, the OAuth endpoints and the browser's code page under /oauth.
  const signin = gatewaySigninSurface(deps);
  app.use(signin.discovery.routes());
  // Each router answers its own errors (token endpoints in RFC 6749's JSON, the code page in HTML).
  app.use(surface('/oauth/', passThrough, [signin.oauth, signin.pages]));
  const consoleApi = [...ssoRouters(deps), ...consoleRouters(deps)];
  const openApi = openApiRoutes(() => consoleApi, deps.config);
  app.use(surface('/v1/', problemErrors(deps.logger), [...consoleApi, openApi, localAdminRoutes(deps, options.localSecret)]));
  for (const router of webRouters(deps)) app.use(router.routes()).use(router.allowedMethods());

  return {
    app,
    listen(port, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        const server = app.listen(port, host);
        server.once('listening', () => resolve(server));
        server.once('error', reject);
      });
    },
    endChangeStreams: () => internal.endChangeStreams(),
  };
}
