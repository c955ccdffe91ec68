import type Router from '@koa/router';
import type { ControlPlaneDeps } from '../deps.js';
import { meRoutes } from './me.js';
import { membersRoutes } from './members.js';
import { gatewaySigninRoutes } from './gateway-signin.js';
import { workspacesRoutes } from './workspaces.js';
import { teamsRoutes } from './teams.js';
import { modelsRoutes } from './models.js';
import { keysRoutes } from './keys.js';
import { scimSettingsRoutes } from './scim-settings.js';
import { ssoSettingsRoutes } from './sso-settings.js';
import { sessionRoutes } from './session.js';
import { usageRoutes } from './usage.js';
import { alertsRoutes } from './alerts.js';

/** Every console API router, mounted under /v1 with problem+json errors. */
export function consoleRouters(deps: ControlPlaneDeps): Router[] {
  return [
    meRoutes(deps),
    membersRoutes(deps),
    gatewaySigninRoutes(deps),
    workspacesRoutes(deps),
    teamsRoutes(deps),
    modelsRoutes(deps),
    keysRoutes(deps),
    scimSettingsRoutes(deps),
    ssoSettingsRoutes(deps),
    sessionRoutes(deps),
    usageRoutes(deps),
    alertsRoutes(deps),
  ];
}
