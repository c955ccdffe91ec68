/**
 * `npm run -s cli -- bootstrap --org <slug> --name "<name>" --owner <email>`
 * Prints only the JSON result on stdout; problems go to stderr with exit 1.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { systemClock } from '../shared/clock.js';
import { AppError } from '../shared/errors.js';
import { openDatabase } from '../control-plane/db/database.js';
import { migrate } from '../control-plane/db/migrate.js';
import { acquireLock, DataDirBusyError, readLock } from '../control-plane/db/data-dir-lock.js';
import { bootstrapOrg, validateBootstrap, type BootstrapInput, type BootstrapResult } from '../control-plane/services/orgs/bootstrap.js';
import { LOCAL_SECRET_HEADER } from '../control-plane/local-admin.js';


const USAGE = 'usage: cli bootstrap --org <slug> --name "<name>" --owner <email>';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

async function bootstrapThroughService(url: string, secret: string, input: BootstrapInput): Promise<BootstrapResult> {
  const res = await fetch(`${url}/v1/local/bootstrap`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [LOCAL_SECRET_HEADER]: secret },
    body: JSON.stringify({ slug: input.slug, name: input.name, owner: input.ownerEmail }),
  });
  const body = (await res.json()) as BootstrapResult & { detail?: string };
  if (!res.ok) fail(body.detail ?? `bootstrap failed with HTTP ${res.status}`);
  return body;
}

async function bootstrapDirectly(config: Config, input: BootstrapInput): Promise<BootstrapResult> {
  const lock = config.databaseUrl ? undefined : acquireLock(config.dataDir);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrate(db);
    const logger = createLogger('silent', 'cli');
    return await bootstrapOrg({ db, config, clock: systemClock, logger }, input);
  } finally {
    await db.close();
    lock?.release();
  }
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (command !== 'bootstrap') fail(USAGE);
  let values: { org?: string; name?: string; owner?: string };
  try {
    ({ values } = parseArgs({
      args: rest,
      options: { org: { type: 'string' }, name: { type: 'string' }, owner: { type: 'string' } },
      strict: true,
    }));
  } catch (err) {
    fail(`${(err as Error).message}\n${USAGE}`);
  }
  const input: BootstrapInput = { slug: values.org ?? '', name: values.name ?? '', ownerEmail: values.owner ?? '' };
  const problems = validateBootstrap(input);
  if (problems.length) fail(`${problems.join('\n')}\n${USAGE}`);

  let config: Config;
  try {
    config = loadConfig(process.env, 'cli');
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }

  let result: BootstrapResult;
  try {
    const holder = config.databaseUrl ? undefined : readLock(config.dataDir);
    if (holder?.url && holder.secret) {
      result = await bootstrapThroughService(holder.url, holder.secret, input);
    } else {
      result = await bootstrapDirectly(config, input);
    }
  } catch (err) {
    if (err instanceof AppError && err.expose) fail(err.message);
    if (err instanceof DataDirBusyError) fail(`${err.message} Try again when it has finished.`);
    fail(`bootstrap failed: ${(err as Error).message}`);
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
