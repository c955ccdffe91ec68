import type { Config } from '../../../shared/config.js';
import type { OutboundPolicy } from '../outbound/guard.js';

/**
 * Which webhook targets may be reached: only public addresses unless the
 * operator allowed private ones, and never the service's own ports on a
 * private address, allowed or not.
 */
export function targetPolicy(config: Config): OutboundPolicy {
  return { allowPrivate: config.alerts.allowPrivateUrls, ownPorts: [config.controlPlanePort, config.proxyPort, config.ops.metricsPort] };
}
