/** `npm start`: control plane and proxy in one process, embedded store unless DATABASE_URL is set. */
import { run } from './run.js';
import { startControlPlane } from '../control-plane/runtime.js';
import { startProxy } from '../proxy/runtime.js';
import { unsetProviderKeyWarnings } from '../shared/models.js';

await run('all', async (config, logger, registry) => {
  const controlPlane = await startControlPlane(config, logger, { registry });
  const proxy = await startProxy(config, logger, { controlPlaneUrl: controlPlane.url, registry });
  const store = config.databaseUrl ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`;
  process.stdout.write(
    `Tollgate is running (${store}).\n` +
      `  control plane: ${config.publicBaseUrl}  (console: ${config.publicBaseUrl}/)\n` +
      `  proxy:         ${config.edgeBaseUrl}\n`,
  );
  for (const line of unsetProviderKeyWarnings(config.models)) process.stderr.write(`${line}\n`);
  return {
    // The proxy drains first (its settlements need the control plane), then the control plane.
    async close(graceMs) {
      await proxy.close(graceMs);
      await controlPlane.close(graceMs);
    },
  };
});
