/** `npm run proxy`: the proxy alone, reaching the control plane at CONTROL_PLANE_URL. */
import { run } from './run.js';
import { startProxy } from '../proxy/runtime.js';
import { unsetProviderKeyWarnings } from '../shared/models.js';

await run('proxy', async (config, logger, registry) => {
  const proxy = await startProxy(config, logger, { controlPlaneUrl: config.controlPlaneUrl!, registry });
  process.stdout.write(`Tollgate proxy on ${config.edgeBaseUrl}\n`);
  for (const line of unsetProviderKeyWarnings(config.models)) process.stderr.write(`${line}\n`);
  return proxy;
});
