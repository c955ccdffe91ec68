import { ConfigError, loadConfig, redactUrl, type Config, type ConfigMode } from '../shared/config.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { DataDirBusyError } from '../control-plane/db/data-dir-lock.js';

/** Shared start-up for the entry points: config once, clear failure, clean shutdown. */
export async function run(
  mode: ConfigMode,
  start: (config: Config, logger: Logger) => Promise<{ close(): Promise<void> }>,
): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env, mode);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel, `tollgate-${mode}`);
  let running: { close(): Promise<void> };
  try {
    running = await start(config, logger);
  } catch (err) {
    if (err instanceof DataDirBusyError) {
      process.stderr.write(`${err.message} Stop it first, or set DATA_DIR to another directory.\n`);
    } else {
      const where = config.databaseUrl ? ` (DATABASE_URL=${redactUrl(config.databaseUrl)})` : '';
      process.stderr.write(`Tollgate failed to start${where}: ${(err as Error).message}\n`);
    }
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
