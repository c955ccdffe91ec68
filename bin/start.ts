/**
 * `npm start`: the whole service from one command, embedded store unless
 * DATABASE_URL is set. The proxy runs in this process; the control plane
 * (and with it the store's work) in a child process, so a settlement batch
 * or a heavy console query never delays a proxied stream.
 */
import { run } from './run.js';
import { startControlPlaneProcess } from './control-plane-process.js';
import { startProxy } from '../proxy/runtime.js';
import { unsetProviderKeyWarnings } from '../shared/models.js';

await run('all', async (config, logger, registry) => {
  // Half a service is worse than none: a control plane that died takes the proxy down with it, loudly.
  const controlPlane = await startControlPlaneProcess(config, logger, () => process.exit(1));
  const proxy = await startProxy(config, logger, { controlPlaneUrl: controlPlane.url, registry }).catch(async (err: unknown) => {
    await controlPlane.close(0).catch(() => undefined);
    throw err;
  });
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
    moreMetrics: () => controlPlane.metrics(),
  };
});
