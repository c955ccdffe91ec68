/** `npm start`: control plane and proxy in one process, embedded store unless DATABASE_URL is set. */
import { run } from './run.js';
import { startControlPlane } from '../control-plane/runtime.js';
import { startProxy } from '../proxy/runtime.js';
import { unsetProviderKeyWarnings } from '../shared/models.js';

await run('all', async (config, logger) => {
  const controlPlane = await startControlPlane(config, logger);
  const proxy = await startProxy(config, logger, { controlPlaneUrl: controlPlane.url });
  const store = config.databaseUrl ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`;
  process.stdout.write(
    `Tollgate is running (${store}).\n` +
      `  control plane: ${config.publicBaseUrl}  (console: ${config.publicBaseUrl}/)\n` +
      `  proxy:         ${config.edgeBaseUrl}\n`,
  );
  for (const line of unsetProviderKeyWarnings(config.models)) process.stderr.write(`${line}\n`);
  return {
    async close() {
      await proxy.close();
      await controlPlane.close();
    },
  };
});
