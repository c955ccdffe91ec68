/** `npm run proxy`: the proxy alone, reaching the control plane at CONTROL_PLANE_URL. */
import { run } from './run.js';
import { startProxy } from '../proxy/runtime.js';

await run('proxy', async (config, logger, registry) => {
  const proxy = await startProxy(config, logger, { controlPlaneUrl: config.controlPlaneUrl!, registry });
  process.stdout.write(`Tollgate proxy on ${config.edgeBaseUrl}\n`);
  return proxy;
});
