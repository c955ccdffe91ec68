import type { Clock } from '../shared/clock.js';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type { Database } from './db/database.js';

/** What every control-plane service and route factory is built from. */
export interface ControlPlaneDeps {
  db: Database;
  config: Config;
  clock: Clock;
  logger: Logger;
}
