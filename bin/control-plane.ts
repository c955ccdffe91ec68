/** `npm run control-plane`: the control plane alone (production shape). */
import { run } from './run.js';
import { startControlPlane } from '../control-plane/runtime.js';

await run('control-plane', async (config, logger, registry) => {
  const controlPlane = await startControlPlane(config, logger, { registry });
  process.stdout.write(`Tollgate control plane on ${config.publicBaseUrl}\n`);
  return controlPlane;
});
