/**
 * The control plane as `npm start`'s child process (started by
 * control-plane-process.ts): its own event loop for the embedded store's
 * work, told when to close by the parent, never by a signal.
 */
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { createMetricsRegistry } from '../shared/metrics.js';
import { restrictUmask } from '../control-plane/db/data-dir-mode.js';
import { DataDirBusyError } from '../control-plane/db/data-dir-lock.js';
import { startControlPlane, type RunningControlPlane } from '../control-plane/runtime.js';
import { createEmbeddedStore } from '../control-plane/db/first-start.js';
import type { FromChild, ToChild } from './control-plane-process.js';

const send = (message: FromChild) => process.send!(message);

// Ctrl-C reaches the whole process group: the parent drains the proxy first, then tells this process to close.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

restrictUmask();
// The parent read .env and checked the settings already; its environment (with the data-plane token) is this one.
const config = loadConfig(process.env, 'all');
const logger = createLogger(config.logLevel, 'tollgate-all');
// Its own process metrics under tollgate_cp_, so the parent can serve both halves' text on one listener.
const registry = config.ops.metricsEnabled ? createMetricsRegistry('tollgate_cp_') : undefined;

/** `--create-store`: only create the embedded store and exit (see first-start.ts). */
const createOnly = process.argv.includes('--create-store');
let controlPlane: RunningControlPlane;
try {
  if (createOnly) {
    await createEmbeddedStore(config.dataDir, logger);
    process.exit(0);
  }
  controlPlane = await startControlPlane(config, logger, { registry });
} catch (err) {
  const e = err as NodeJS.ErrnoException & { port?: number; address?: string };
  send({
    type: 'failed',
    message: e.message,
    code: e.code,
    port: e.port,
    address: e.address,
    ...(err instanceof DataDirBusyError ? { holder: err.holder } : {}),
  });
  process.exit(1);
}

let closing = false;
const close = (graceMs: number) => {
  if (closing) return;
  closing = true;
  controlPlane.close(graceMs).then(
    () => process.exit(0),
    (err: unknown) => {
      logger.error({ err }, 'control plane shutdown failed');
      process.exit(1);
    },
  );
};

process.on('message', (message: ToChild) => {
  if (message.type === 'close') close(message.graceMs);
  else if (message.type === 'metrics') {
    const reply = (text: string) => process.connected && send({ type: 'metrics', id: message.id, text });
    (registry ? registry.metrics() : Promise.resolve('')).then(reply, () => reply(''));
  }
});
// The parent is gone (killed, or exited at a second signal): nobody is left to serve, close the store and go.
process.on('disconnect', () => close(1_000));
send({ type: 'ready', url: controlPlane.url });
